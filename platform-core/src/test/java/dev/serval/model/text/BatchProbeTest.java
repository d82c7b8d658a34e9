package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.BatchingDecision;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;

/** Whether the probe finds batching paying, given fake costs per inference on a manual clock. */
class BatchProbeTest {

    private static final Duration BUDGET = BatchProbe.BUDGET;
    private static final long MS = 1_000_000;

    /** A fake CPU: each inference of {@code rows} texts advances the clock by {@code cost(rows)} nanoseconds. */
    private static final class FakeCpu {
        long now;
        final List<Integer> inferences = new ArrayList<>();
        private final IntToLongFunction cost;

        FakeCpu(IntToLongFunction cost) {
            this.cost = cost;
        }

        BatchProbe.Result probe(int largest) throws Exception {
            return BatchProbe.measure(rows -> {
                inferences.add(rows);
                now += cost.applyAsLong(rows);
            }, largest, () -> now, BUDGET);
        }
    }

    @Test
    void aCpuWhereBatchingDoesNotPayKeepsBatchOneAndStopsAfterTwoSizesThatDidNotPay() throws Exception {
        FakeCpu cpu = new FakeCpu(rows -> rows * 3 * MS);
        BatchProbe.Result result = cpu.probe(32);
        assertEquals(1, result.preferred(), result.evidence());
        assertEquals(List.of(1, 2, 4), List.copyOf(new HashSet<>(cpu.inferences)).stream().sorted().toList());
        assertTrue(result.evidence().contains("batches 2 and 4 were not 5% faster per text than batch 1"),
                result.evidence());
        assertTrue(result.evidence().endsWith("batching does not pay: preferred batch 1"), result.evidence());
    }

    @Test
    void growsWhileSizesPayAndLeavesTheSizeToTheDeploymentLimit() throws Exception {
        // a fixed cost per inference that batching shares, and a per-text cost that it does not; past 8 texts per
        // inference, each text costs a quarter more (caches): 16 and 32 are no better than 8
        FakeCpu cpu = new FakeCpu(rows -> rows <= 8 ? 2 * MS + rows * MS : 2 * MS + rows * MS + rows * MS / 4);
        BatchProbe.Result result = cpu.probe(32);
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertTrue(result.evidence().startsWith("batch-size probe, texts/s at batch 1: 333, 2: 500, 4: 667, 8: 800, "
                + "16: 727, 32: 762 ("), result.evidence());
        assertTrue(result.evidence().contains("batches 16 and 32 were not 5% faster per text than batch 8"),
                result.evidence());
        assertTrue(result.evidence().endsWith("batching pays (batch 8: 58% less per text than batch 1), so "
                + "max_batch_size limits batches"), result.evidence());
    }

    @Test
    void oneSizeThatDoesNotPayDoesNotEndTheProbe() throws Exception {
        // batch 2 costs what batch 1 does per text; 4 is 10 % cheaper, 8 and more 40 %
        long[] perText = {0, 1000_000, 1000_000, 0, 900_000, 0, 0, 0, 600_000};
        FakeCpu cpu = new FakeCpu(rows -> rows * perText[Math.min(rows, 8)]);
        BatchProbe.Result result = cpu.probe(32);
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertTrue(result.evidence().contains("batches 16 and 32 were not 5% faster per text than batch 8"),
                result.evidence());
    }

    @Test
    void aSizeOnlyAFewPerCentBetterIsNotWorthItsLatency() throws Exception {
        // batch 2 and more are 3 % cheaper per text than batch 1: within the noise margin, so batch 1 stays
        FakeCpu cpu = new FakeCpu(rows -> rows == 1 ? 1000 * 1000 : rows * 970 * 1000);
        assertEquals(1, cpu.probe(32).preferred());
    }

    @Test
    void whenTheLargestSizeStillPaysTheDeploymentLimitAloneCounts() throws Exception {
        FakeCpu cpu = new FakeCpu(rows -> 4 * MS + rows * MS / 10);
        BatchProbe.Result result = cpu.probe(32);
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertTrue(result.evidence().contains("batch 32 is the largest probed and still paid"), result.evidence());
        assertEquals(16, new BatchingDecision(true, true, "x").withEvidence(result.evidence()).batchLimit(16));
    }

    @Test
    void neverProbesBeyondTheLargestSizeAllowed() throws Exception {
        FakeCpu cpu = new FakeCpu(rows -> 4 * MS + rows * MS / 10);
        BatchProbe.Result result = cpu.probe(6);
        assertTrue(cpu.inferences.stream().allMatch(rows -> rows <= 4), cpu.inferences.toString());
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertEquals(1, new FakeCpu(rows -> MS).probe(1).preferred());
    }

    @Test
    void aSlowSampleFromOtherWorkOnTheMachineDoesNotHideASizeThatPays() throws Exception {
        // batch 2 costs 40 % less per text, but its first inference is slowed down 10 times by a neighbour
        int[] batchTwoCalls = {0};
        FakeCpu cpu = new FakeCpu(rows -> {
            if (rows == 2 && ++batchTwoCalls[0] == 2) {
                return 30 * MS;
            }
            return rows == 1 ? MS : rows * 6 * MS / 10 + (rows > 2 ? rows * MS : 0);
        });
        BatchProbe.Result result = cpu.probe(32);
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertTrue(result.evidence().contains("batching pays (batch 2: 40% less per text"), result.evidence());
    }

    @Test
    void stopsWhenTheNextSizeWouldOverrunTheBudget() throws Exception {
        // batching pays all the way, but batch 1 costs 31 ms a text: the budget runs out before batch 4
        FakeCpu cpu = new FakeCpu(rows -> 30 * MS + rows * MS);
        BatchProbe.Result result = cpu.probe(32);
        assertTrue(cpu.now <= BUDGET.toNanos(), "took " + cpu.now);
        assertEquals(BatchingDecision.NO_PREFERENCE, result.preferred(), result.evidence());
        assertTrue(result.evidence().contains("budget left no time for batch 4"),
                result.evidence());
    }

    @Test
    void refusesALargestBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> new FakeCpu(rows -> MS).probe(0));
    }

    @Test
    void theSyntheticTextsAreFixedAndOfTypicalLength() {
        List<String> texts = BatchProbe.texts(BatchProbe.LARGEST);
        assertEquals(texts, BatchProbe.texts(BatchProbe.LARGEST));
        assertEquals(BatchProbe.LARGEST, new HashSet<>(texts).size());
        for (String text : texts) {
            int words = text.split(" ").length;
            assertTrue(words >= 15 && words <= 17, text);
        }
    }
}
