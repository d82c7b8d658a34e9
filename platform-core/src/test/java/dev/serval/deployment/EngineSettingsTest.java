package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.serval.spec.InvalidSpec;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class EngineSettingsTest {

    private static final EngineSettings DEFAULTS = EngineSettings.defaults();

    private static EngineSettings with(Duration period, int budget, Duration refresh, Duration residency, int factor) {
        return new EngineSettings(period, budget, DEFAULTS.failureMonitorEnabled(), DEFAULTS.failureWindow(),
                DEFAULTS.failureThreshold(), DEFAULTS.failureMinRequests(), DEFAULTS.maxReplacements(), refresh,
                residency, factor);
    }

    private static void refuses(String property, String problem, Runnable settings) {
        InvalidSpec refused = assertThrows(InvalidSpec.class, settings::run);
        assertEquals(property, refused.field());
        assertEquals(problem, refused.problem());
    }

    @Test
    void refusesEachServerSettingOutOfItsBoundsNamingTheProperty() {
        Duration refresh = DEFAULTS.multiplexRefreshPeriod();
        Duration residency = DEFAULTS.multiplexMinResidency();
        refuses("serval.autoscaling.period", "must be between 10ms and 10s, not PT0.005S",
                () -> with(Duration.ofMillis(5), 4, refresh, residency, 10));
        refuses("serval.autoscaling.period", "must be between 10ms and 10s, not PT11S",
                () -> with(Duration.ofSeconds(11), 4, refresh, residency, 10));
        refuses("serval.cpu-budget", "must be at least 1 thread, not 0",
                () -> with(Duration.ofMillis(100), 0, refresh, residency, 10));
        refuses("serval.multiplex.refresh-period", "must be between 100ms and 1h, not PT0S",
                () -> with(Duration.ofMillis(100), 4, Duration.ZERO, residency, 10));
        refuses("serval.multiplex.min-residency", "must be between 0s and 1m, not PT-1S",
                () -> with(Duration.ofMillis(100), 4, refresh, Duration.ofSeconds(-1), 10));
        refuses("serval.multiplex.residency-factor", "must be between 0 and 1000, not 1001",
                () -> with(Duration.ofMillis(100), 4, refresh, residency, 1001));
    }

    @Test
    void acceptsTheBoundsThemselvesAndHandsEachPartItsSection() {
        EngineSettings edges = with(Duration.ofMillis(10), 1, Duration.ofHours(1), Duration.ofMinutes(1), 1000);
        assertEquals(Duration.ofHours(1), edges.multiplexTuning().refreshPeriod());
        assertEquals(1000, edges.multiplexTuning().residencyFactor());
        assertEquals(DEFAULTS.failureWindow(), edges.failureMonitor().window());
        with(Duration.ofSeconds(10), 1, Duration.ofMillis(100), Duration.ZERO, 0);
    }

    @Test
    void theEnginesBuilderDefaultsWhatIsNotSetAndChecksTheBoundsOnce() {
        ServingEngine.Builder builder = ServingEngine.builder(new SimpleMeterRegistry())
                .multiplex(Duration.ofSeconds(2), Duration.ZERO, 0).cacheMaxBytes(0);
        EngineSettings settings = builder.settings();
        assertEquals(DEFAULTS.autoscalingPeriod(), settings.autoscalingPeriod());
        assertEquals(DEFAULTS.failureMonitor(), settings.failureMonitor());
        assertEquals(Duration.ofSeconds(2), settings.multiplexRefreshPeriod());
        assertEquals(0, settings.cacheMaxBytes());
        refuses("serval.cpu-budget", "must be at least 1 thread, not 0",
                () -> builder.autoscaling(Duration.ofMillis(100), 0).start());
        assertThrows(IllegalArgumentException.class, () -> builder.autoscaling(Duration.ofMillis(100), 1)
                .failureMonitor(true, Duration.ZERO, 0.5, 10, 3).settings());
    }
}
