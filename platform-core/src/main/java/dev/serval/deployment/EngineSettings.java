package dev.serval.deployment;

import dev.serval.cache.CacheBudget;
import dev.serval.health.FailureMonitor;
import dev.serval.multiplex.Multiplexer;
import dev.serval.spec.CacheSpec;
import dev.serval.spec.InvalidSpec;
import java.time.Duration;
import java.util.Objects;

/**
 * The server-wide settings of one {@link ServingEngine}, with their bounds: the one place they are checked. Each
 * component is one {@code serval.*} property (docs/configuration.md); a value out of its bounds is refused with an
 * {@link InvalidSpec} whose {@link InvalidSpec#field() field} is that property's name, so the edge names it without
 * knowing the bounds. The engine's parts read their own sections ({@link #failureMonitor()},
 * {@link #multiplexTuning()}), which check what they need of themselves as well.
 *
 * @param autoscalingPeriod       {@code serval.autoscaling.period}: how often the autoscaler samples and decides;
 *                                10ms to 10s
 * @param cpuBudget               {@code serval.cpu-budget}: threads the replicas of every deployment may run
 *                                together; at least 1
 * @param failureMonitorEnabled   {@code serval.failure-monitor.enabled}
 * @param failureWindow           {@code serval.failure-monitor.window}
 * @param failureThreshold        {@code serval.failure-monitor.threshold}
 * @param failureMinRequests      {@code serval.failure-monitor.min-requests}
 * @param maxReplacements         {@code serval.failure-monitor.max-replacements}
 * @param multiplexRefreshPeriod  {@code serval.multiplex.refresh-period}: how often a multiplexed deployment rescans
 *                                the repository; 100ms to 1h
 * @param multiplexMinResidency   {@code serval.multiplex.min-residency}: 0s to 1m
 * @param multiplexResidencyFactor {@code serval.multiplex.residency-factor}: 0 to 1000
 * @param cacheMaxBytes           {@code serval.cache.max-bytes}: bytes every deployment's result cache may hold
 *                                together (shared out by {@link CacheBudget}); 0 (no caching) to 1Ti
 */
public record EngineSettings(Duration autoscalingPeriod, int cpuBudget, boolean failureMonitorEnabled,
        Duration failureWindow, double failureThreshold, int failureMinRequests, int maxReplacements,
        Duration multiplexRefreshPeriod, Duration multiplexMinResidency, int multiplexResidencyFactor,
        long cacheMaxBytes) {

    /** The default of {@code serval.cache.max-bytes}: four deployments' default caches. */
    public static final long DEFAULT_CACHE_MAX_BYTES = 256L << 20;

    public EngineSettings {
        within("serval.autoscaling.period", autoscalingPeriod, Duration.ofMillis(10), Duration.ofSeconds(10),
                "10ms and 10s");
        if (cpuBudget < 1) {
            throw new InvalidSpec("serval.cpu-budget", "must be at least 1 thread, not " + cpuBudget);
        }
        within("serval.multiplex.refresh-period", multiplexRefreshPeriod, Duration.ofMillis(100), Duration.ofHours(1),
                "100ms and 1h");
        within("serval.multiplex.min-residency", multiplexMinResidency, Duration.ZERO, Duration.ofMinutes(1),
                "0s and 1m");
        if (multiplexResidencyFactor < 0 || multiplexResidencyFactor > 1000) {
            throw new InvalidSpec("serval.multiplex.residency-factor", "must be between 0 and 1000, not "
                    + multiplexResidencyFactor);
        }
        if (cacheMaxBytes < 0 || cacheMaxBytes > CacheSpec.MAX_BYTES) {
            throw new InvalidSpec("serval.cache.max-bytes", "must be between 0 (no result cache) and "
                    + CacheSpec.MAX_BYTES + " bytes (1Ti), not " + cacheMaxBytes);
        }
        new FailureMonitor.Settings(failureMonitorEnabled, failureWindow, failureThreshold, failureMinRequests,
                maxReplacements); // checks its own bounds
    }

    /** The settings with the default result cache ceiling. */
    public EngineSettings(Duration autoscalingPeriod, int cpuBudget, boolean failureMonitorEnabled,
            Duration failureWindow, double failureThreshold, int failureMinRequests, int maxReplacements,
            Duration multiplexRefreshPeriod, Duration multiplexMinResidency, int multiplexResidencyFactor) {
        this(autoscalingPeriod, cpuBudget, failureMonitorEnabled, failureWindow, failureThreshold, failureMinRequests,
                maxReplacements, multiplexRefreshPeriod, multiplexMinResidency, multiplexResidencyFactor,
                DEFAULT_CACHE_MAX_BYTES);
    }

    /**
     * The defaults of every property: a 100ms autoscaling period, the available processors as the CPU budget,
     * {@link FailureMonitor.Settings#defaults()} and {@link Multiplexer.Tuning#DEFAULTS}.
     */
    public static EngineSettings defaults() {
        FailureMonitor.Settings monitor = FailureMonitor.Settings.defaults();
        Multiplexer.Tuning tuning = Multiplexer.Tuning.DEFAULTS;
        return new EngineSettings(Duration.ofMillis(100), Runtime.getRuntime().availableProcessors(),
                monitor.enabled(), monitor.window(), monitor.threshold(), monitor.minRequests(),
                monitor.maxReplacements(), tuning.refreshPeriod(), tuning.minResidency(), tuning.residencyFactor());
    }

    /** The failure monitor's section ({@code serval.failure-monitor.*}). */
    public FailureMonitor.Settings failureMonitor() {
        return new FailureMonitor.Settings(failureMonitorEnabled, failureWindow, failureThreshold, failureMinRequests,
                maxReplacements);
    }

    /** The multiplexers' section ({@code serval.multiplex.*}). */
    public Multiplexer.Tuning multiplexTuning() {
        return new Multiplexer.Tuning(multiplexRefreshPeriod, multiplexMinResidency, multiplexResidencyFactor);
    }

    private static void within(String property, Duration value, Duration min, Duration max, String bounds) {
        Objects.requireNonNull(value, property);
        if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new InvalidSpec(property, "must be between " + bounds + ", not " + value);
        }
    }
}
