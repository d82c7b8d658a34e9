package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class OverloadGoalsTest {

    private static final double C = 700;

    private static OverloadGoals.Verdict find(List<OverloadGoals.Verdict> verdicts, String figureStart) {
        return verdicts.stream().filter(v -> v.figure().startsWith(figureStart)).findFirst().orElseThrow();
    }

    @Test
    void theBoundIsTheQueueAndTheReplicaSlotsServedAtCapacityPlusOneRequestAlone() {
        // 16 queued + 8 ongoing ahead at 700/s: 34.29 ms of waiting, plus 3 ms served alone
        assertEquals(24 / 700.0 * 1000 + 3, OverloadGoals.admittedBoundMillis(16, 8, 1, 700, 3), 1e-9);
        assertEquals((16 + 16) / 700.0 * 1000 + 3, OverloadGoals.admittedBoundMillis(16, 8, 2, 700, 3), 1e-9);
    }

    @Test
    void aServerThatHoldsItsGoodputAndRefusesQuicklyMeetsEveryGoal() {
        OverloadGoals.Point point = new OverloadGoals.Point(10, 0.9 * C, 6_300 * 20, 0, 0, 1.5, 30);

        List<OverloadGoals.Verdict> verdicts = OverloadGoals.evaluate(point, C, 37.3);

        assertEquals(5, verdicts.size());
        assertTrue(OverloadGoals.allMet(verdicts));
        assertEquals(0.9, find(verdicts, "goodput").value(), 1e-9);
    }

    @Test
    void theCollapseOfTodayMeetsNeitherGoodputNorRefusalLatencyNorTheBound() {
        // issue 14, 10 x C on the 2-core machine: goodput 0.57, refusals p99 2.2 s
        OverloadGoals.Point point = new OverloadGoals.Point(10, 0.57 * C, 120_000, 0, 0, 2_200, 2_900);

        List<OverloadGoals.Verdict> verdicts = OverloadGoals.evaluate(point, C, 37.3);

        assertFalse(find(verdicts, "goodput").met());
        assertFalse(find(verdicts, "refusal p99").met());
        assertFalse(find(verdicts, "admitted p99").met());
        assertTrue(find(verdicts, "refusals not").met());
        assertTrue(find(verdicts, "requests without").met());
        assertFalse(OverloadGoals.allMet(verdicts));
    }

    @Test
    void goodputExactlyAtTheThresholdMeetsTheGoal() {
        OverloadGoals.Point point = new OverloadGoals.Point(10, 0.85 * C, 1, 0, 0, 1, 1);

        assertTrue(find(OverloadGoals.evaluate(point, C, 37.3), "goodput").met());
    }

    @Test
    void refusalsWithoutRetryAfterAndDroppedConnectionsEachFailTheirGoal() {
        OverloadGoals.Point point = new OverloadGoals.Point(10, C, 1_000, 3, 7, 1, 10);

        List<OverloadGoals.Verdict> verdicts = OverloadGoals.evaluate(point, C, 37.3);

        assertEquals(3, find(verdicts, "refusals not").value());
        assertFalse(find(verdicts, "refusals not").met());
        assertEquals(7, find(verdicts, "requests without").value());
        assertFalse(find(verdicts, "requests without").met());
    }

    @Test
    void noRefusalAtAllIsNoSlowRefusalButNoAdmittedRequestIsNoBoundedLatency() {
        OverloadGoals.Point nothingRefused = new OverloadGoals.Point(1, C, 0, 0, 0, Double.NaN, 12);
        OverloadGoals.Point nothingAdmitted = new OverloadGoals.Point(20, 0, 5_000, 0, 0, 1, Double.NaN);

        assertTrue(find(OverloadGoals.evaluate(nothingRefused, C, 37.3), "refusal p99").met());
        assertFalse(find(OverloadGoals.evaluate(nothingAdmitted, C, 37.3), "admitted p99").met());
    }

    @Test
    void refusalP99AtTwentyMillisecondsIsAlreadyTooSlow() {
        OverloadGoals.Point point = new OverloadGoals.Point(10, C, 1_000, 0, 0, 20.0, 10);

        assertFalse(find(OverloadGoals.evaluate(point, C, 37.3), "refusal p99").met());
    }
}
