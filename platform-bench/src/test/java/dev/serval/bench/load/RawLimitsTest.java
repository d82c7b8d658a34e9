package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.bench.load.RawLimits.Rate;
import dev.serval.bench.load.RawLimits.Runtime;
import dev.serval.bench.load.RawLimits.Single;
import dev.serval.bench.load.RawLimits.Split;
import java.util.List;
import org.junit.jupiter.api.Test;

class RawLimitsTest {

    static final Split TWO_BY_ONE = new Split(2, 1);
    static final Split ONE_BY_TWO = new Split(1, 2);
    static final Split ONE_BY_ONE = new Split(1, 1);
    static final Runtime DJL = new Runtime(RawLimits.DJL, "DJL", "1.29.0", true, null);
    static final Runtime PYTHON_SAME = new Runtime("python-1.29.0", "Python", "1.29.0", false, null);
    static final Runtime PYTHON_NEWEST = new Runtime("python-1.32.0", "Python", "1.32.0", false, null);

    /** DJL best at batch 32 on 2x1; Python 1.32 best at batch 1 on 2x1 and overall at batch 32. */
    static RawLimits sample() {
        return new RawLimits(List.of(DJL, PYTHON_SAME, PYTHON_NEWEST), List.of(
                new Rate(RawLimits.DJL, "short", TWO_BY_ONE, 1, 395),
                new Rate(RawLimits.DJL, "short", TWO_BY_ONE, 32, 440),
                new Rate(RawLimits.DJL, "short", ONE_BY_TWO, 1, 250),
                new Rate(RawLimits.DJL, "short", ONE_BY_TWO, 32, 400),
                new Rate("python-1.29.0", "short", TWO_BY_ONE, 1, 375),
                new Rate("python-1.29.0", "short", TWO_BY_ONE, 32, 432),
                new Rate("python-1.29.0", "short", ONE_BY_TWO, 1, 295),
                new Rate("python-1.32.0", "short", TWO_BY_ONE, 1, 401),
                new Rate("python-1.32.0", "short", TWO_BY_ONE, 32, 492),
                new Rate(RawLimits.DJL, "mixed", TWO_BY_ONE, 32, 380)), List.of(
                new Single(RawLimits.DJL, ONE_BY_ONE, 5.0, 6.0, 5.1),
                new Single(RawLimits.DJL, ONE_BY_TWO, 3.4, 4.0, 3.5),
                new Single("python-1.32.0", ONE_BY_TWO, 3.0, 3.9, 3.1)));
    }

    @Test
    void theBestFiguresSpanEveryRuntimeAndSplit() {
        RawLimits raw = sample();

        assertEquals(401, raw.bestAt("short", 1).orElseThrow().textsPerSecond());
        assertEquals("python-1.32.0", raw.bestAt("short", 1).orElseThrow().runtime());
        assertEquals(492, raw.best("short").orElseThrow().textsPerSecond());
        assertEquals(380, raw.best("mixed").orElseThrow().textsPerSecond());
        assertTrue(raw.bestAt("short", 8).isEmpty());
    }

    @Test
    void twoMeasurementsOfTheSameLoopsKeepEachFiguresBest() {
        RawLimits first = sample();
        RawLimits later = new RawLimits(List.of(), List.of(
                new Rate(RawLimits.DJL, "short", TWO_BY_ONE, 1, 420), // faster than the first time
                new Rate("python-1.32.0", "short", TWO_BY_ONE, 1, 390), // slower: the first figure stays
                new Rate(RawLimits.DJL, "short", TWO_BY_ONE, 4, 430)), List.of( // only measured later
                new Single(RawLimits.DJL, ONE_BY_TWO, 3.1, 3.9, 3.2),
                new Single("python-1.32.0", ONE_BY_TWO, 3.3, 3.9, 3.4)));

        RawLimits both = first.bestOf(later);

        assertEquals(420, both.rate(RawLimits.DJL, "short", TWO_BY_ONE, 1).orElseThrow());
        assertEquals(401, both.rate("python-1.32.0", "short", TWO_BY_ONE, 1).orElseThrow());
        assertEquals(430, both.rate(RawLimits.DJL, "short", TWO_BY_ONE, 4).orElseThrow());
        assertEquals(first.rates().size() + 1, both.rates().size());
        assertEquals(3.0, both.fastestSingle(2).orElseThrow().p50()); // python's first, still the fastest
        assertEquals(3.1, both.singles().stream().filter(s -> s.runtime().equals(RawLimits.DJL)
                && s.split().equals(ONE_BY_TWO)).findFirst().orElseThrow().p50());
        assertEquals(first.runtimes(), both.runtimes());
    }

    @Test
    void servalsBatchSizeIsTheRuntimesBestAtItsSplit() {
        RawLimits raw = sample();

        assertEquals(32, raw.bestBatch(RawLimits.DJL, "short", TWO_BY_ONE).orElseThrow());
        assertTrue(raw.bestBatch(RawLimits.DJL, "short", new Split(4, 1)).isEmpty());
    }

    @Test
    void javaIsComparedWithPythonAtTheSameOnnxRuntimeVersionWhereBothWereMeasured() {
        List<RawLimits.Ratio> ratios = sample().javaOverPython("short");

        assertEquals(3, ratios.size()); // Python 1.29 has no 1x2 batch-32 figure
        RawLimits.Ratio batch32 = ratios.stream().filter(r -> r.split().equals(TWO_BY_ONE) && r.batch() == 32)
                .findFirst().orElseThrow();
        assertEquals(440.0 / 432, batch32.ratio(), 1e-12);
        assertEquals(250.0 / 295, ratios.stream().filter(r -> r.split().equals(ONE_BY_TWO)).findFirst().orElseThrow()
                .ratio(), 1e-12);
    }

    @Test
    void noRatioWithoutAMeasuredPythonAtTheJavaVersion() {
        RawLimits raw = sample();
        RawLimits withoutSame = new RawLimits(List.of(DJL, new Runtime("python-1.29.0", "Python", "1.29.0", false,
                "`pip install` failed"), PYTHON_NEWEST), raw.rates(), raw.singles());

        assertTrue(withoutSame.pythonAtJavaVersion().isEmpty());
        assertTrue(withoutSame.javaOverPython("short").isEmpty());
    }

    @Test
    void theFastestSingleTextLatencyIsTheLowestP50AtThatSplit() {
        RawLimits raw = sample();

        assertEquals("python-1.32.0", raw.fastestSingle(2).orElseThrow().runtime());
        assertEquals(5.0, raw.fastestSingle(1).orElseThrow().p50());
        assertTrue(raw.fastestSingle(4).isEmpty());
    }

    @Test
    void splitsAndBatchesAreListedOnce() {
        RawLimits raw = sample();

        assertEquals(List.of(TWO_BY_ONE, ONE_BY_TWO, ONE_BY_ONE), raw.splits());
        assertEquals(List.of(1, 32), raw.batches("short"));
        assertEquals("2x1", TWO_BY_ONE.label());
    }

    @Test
    void aSplitNeedsAWorkerAndAThread() {
        assertThrows(IllegalArgumentException.class, () -> new Split(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new Split(2, 0));
    }
}
