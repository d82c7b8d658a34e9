package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RampTimelineTest {

    private static final List<RampTimeline.Phase> PHASES = List.of(
            new RampTimeline.Phase("low", 0.3, Duration.ofSeconds(10)),
            new RampTimeline.Phase("step up", 1.6, Duration.ofSeconds(20)),
            new RampTimeline.Phase("idle", 0, Duration.ofSeconds(15)));

    private static RampTimeline.Row row(double seconds, String phase, int desired, int running, long errors) {
        return new RampTimeline.Row(seconds, phase, 0, 0, errors == 0 ? Map.of() : Map.of("HTTP 503", errors),
                Double.NaN, Double.NaN, desired, running, 0, running > 0 ? "READY" : "IDLE", 0);
    }

    private static final List<RampTimeline.Row> ROWS = List.of(
            row(5, "low", 1, 1, 0),
            row(12, "step up", 1, 1, 0),
            row(14.5, "step up", 2, 1, 0),
            row(16, "step up", 2, 2, 0),
            row(31, "idle", 1, 1, 0),
            row(40, "idle", 0, 1, 0),
            row(41.5, "idle", 0, 0, 2));

    @Test
    void phasesStartOneAfterTheOther() {
        assertEquals(0, RampTimeline.start(PHASES, "low"));
        assertEquals(10, RampTimeline.start(PHASES, "step up"));
        assertEquals(30, RampTimeline.start(PHASES, "idle"));
        assertThrows(IllegalArgumentException.class, () -> RampTimeline.start(PHASES, "none"));
    }

    @Test
    void measuresTheStepResponseAndTheWayToZeroFromTheSamples() {
        assertEquals(6.0, RampTimeline.untilRunning(ROWS, 10, 2), 1e-9, "the second replica ran at 16 s");
        assertTrue(Double.isNaN(RampTimeline.untilRunning(ROWS, 10, 3)));
        assertEquals(11.5, RampTimeline.untilZero(ROWS, 30), 1e-9, "desired and running both 0 at 41.5 s");
        assertEquals(2, RampTimeline.maxRunning(ROWS, "step up"));
    }

    @Test
    void countsErrorsOutsideTheExpectedPhase() {
        assertEquals(2, RampTimeline.errorsOutside(ROWS, "low"));
        assertEquals(0, RampTimeline.errorsOutside(ROWS, "idle"));
    }

    @Test
    void refusesAPhaseWithoutDuration() {
        assertThrows(IllegalArgumentException.class, () -> new RampTimeline.Phase("x", 1, Duration.ZERO));
    }
}
