package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SoakGoalsTest {

    /** Samples every 10 s for 10 minutes: heap and RSS as functions of the minute. */
    private static List<SoakGoals.Sample> samples(java.util.function.DoubleUnaryOperator heap,
            java.util.function.DoubleUnaryOperator rss) {
        List<SoakGoals.Sample> samples = new ArrayList<>();
        for (int k = 0; k <= 60; k++) {
            double minutes = k / 6.0;
            samples.add(new SoakGoals.Sample(minutes, 0, 8, heap.applyAsDouble(minutes), rss.applyAsDouble(minutes),
                    rss.applyAsDouble(minutes) - 100, 80));
        }
        return samples;
    }

    private static SoakGoals.Verdict find(List<SoakGoals.Verdict> verdicts, String figureStart) {
        return verdicts.stream().filter(v -> v.figure().startsWith(figureStart)).findFirst().orElseThrow();
    }

    @Test
    void theSlopeIsTheLeastSquaresLineThroughThePoints() {
        List<SoakGoals.Sample> line = List.of(new SoakGoals.Sample(0, 0, 1, 10, 0, 0, 0),
                new SoakGoals.Sample(1, 0, 1, 12, 0, 0, 0), new SoakGoals.Sample(2, 0, 1, 14, 0, 0, 0));
        List<SoakGoals.Sample> scattered = List.of(new SoakGoals.Sample(0, 0, 1, 1, 0, 0, 0),
                new SoakGoals.Sample(1, 0, 1, 3, 0, 0, 0), new SoakGoals.Sample(2, 0, 1, 2, 0, 0, 0),
                new SoakGoals.Sample(3, 0, 1, Double.NaN, 0, 0, 0));

        assertEquals(2.0, SoakGoals.slopePerMinute(line, SoakGoals.Sample::heapMb), 1e-12);
        assertEquals(0.5, SoakGoals.slopePerMinute(scattered, SoakGoals.Sample::heapMb), 1e-12); // NaN skipped
        assertTrue(Double.isNaN(SoakGoals.slopePerMinute(line.subList(0, 2), SoakGoals.Sample::heapMb)));
    }

    @Test
    void theStandardErrorOfTheSlopeGrowsWithTheScatter() {
        List<SoakGoals.Sample> line = List.of(new SoakGoals.Sample(0, 0, 1, 10, 0, 0, 0),
                new SoakGoals.Sample(1, 0, 1, 12, 0, 0, 0), new SoakGoals.Sample(2, 0, 1, 14, 0, 0, 0));
        List<SoakGoals.Sample> scattered = List.of(new SoakGoals.Sample(0, 0, 1, 1, 0, 0, 0),
                new SoakGoals.Sample(1, 0, 1, 3, 0, 0, 0), new SoakGoals.Sample(2, 0, 1, 2, 0, 0, 0));

        assertEquals(0.0, SoakGoals.fit(line, SoakGoals.Sample::heapMb).standardError(), 1e-12);
        // residuals -0.5, 1, -0.5: sqrt(1.5 / 1 / 2)
        assertEquals(Math.sqrt(0.75), SoakGoals.fit(scattered, SoakGoals.Sample::heapMb).standardError(), 1e-12);
    }

    @Test
    void memoryThatGrowsOnlyWhileWarmingUpIsFlat() {
        // +30 MB of RSS and +8 MB of heap in the first 4 minutes, then flat with a little noise
        List<SoakGoals.Sample> samples = samples(m -> 40 + Math.min(m, 4) * 2 + (Math.round(m * 6) % 2) * 0.3,
                m -> 400 + Math.min(m, 4) * 7.5 + (Math.round(m * 6) % 3));

        List<SoakGoals.Verdict> verdicts = SoakGoals.evaluate(samples, 0);

        assertTrue(find(verdicts, "heap").met());
        assertTrue(find(verdicts, "RSS").met());
        assertTrue(find(verdicts, "failed").met());
        assertEquals(0.0, find(verdicts, "heap").value(), 0.1);
    }

    @Test
    void aSteadyLeakFailsItsGoal() {
        List<SoakGoals.Sample> samples = samples(m -> 40 + 0.6 * m, m -> 400 + 2.5 * m);

        List<SoakGoals.Verdict> verdicts = SoakGoals.evaluate(samples, 0);

        assertEquals(0.6, find(verdicts, "heap").value(), 1e-9);
        assertFalse(find(verdicts, "heap").met());
        assertEquals(2.5, find(verdicts, "RSS").value(), 1e-9);
        assertFalse(find(verdicts, "RSS").met());
    }

    @Test
    void anyFailedRequestFailsTheErrorGoalAndLatencyAndThreadsAreOnlyReported() {
        List<SoakGoals.Verdict> verdicts = SoakGoals.evaluate(samples(m -> 40, m -> 400), 1);

        assertFalse(find(verdicts, "failed").met());
        assertNull(find(verdicts, "p99").met());
        assertNull(find(verdicts, "threads").met());
    }

    @Test
    void theSecondHalfStartsAtHalfTheRunsTime() {
        List<SoakGoals.Sample> samples = samples(m -> 0, m -> 0);

        List<SoakGoals.Sample> half = SoakGoals.secondHalf(samples);

        assertEquals(5.0, half.getFirst().minutes(), 1e-9);
        assertEquals(31, half.size());
    }

    @Test
    void tooFewSamplesLeaveTheMemoryGoalsUndecided() {
        List<SoakGoals.Sample> samples = List.of(new SoakGoals.Sample(0, 0, 1, 40, 400, 0, 80),
                new SoakGoals.Sample(1, 0, 1, 41, 401, 0, 80));

        assertNull(find(SoakGoals.evaluate(samples, 0), "heap").met());
    }
}
