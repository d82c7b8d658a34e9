package dev.serval.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The batch policy's decisions, from plain numbers and a manual clock: no threads, no sleeps. */
class BatchPolicyTest {

    private static final Duration TWO_MS = Duration.ofMillis(2);

    /** A manual clock, in nanoseconds. */
    private long now = 1_000_000_000L;

    @Test
    void aModelThatDoesNotBatchRunsOneInputAtATimeAndNeverWaits() {
        BatchPolicy policy = BatchPolicy.of(false, 2, 32, TWO_MS);

        assertEquals(1, policy.maxBatch());
        assertEquals(1, policy.share(100, 0));
        assertEquals(1, policy.share(100, 1));
        assertFalse(policy.waitsForCompany(1, 1, 100), "a full batch of one never waits");
    }

    @Test
    void aPredictorTakesItsFairShareOfTheQueueRoundedUpAndAtMostTheBatchLimit() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 8, Duration.ZERO);

        assertEquals(2, policy.share(2, 1), "three inputs over two predictors: two each, rounded up");
        assertEquals(3, policy.share(5, 0));
        assertEquals(8, policy.share(100, 1), "never past max-batch-size");
        assertEquals(1, policy.share(0, 1), "a lone input is a batch of one");
        assertEquals(1, policy.share(0, 0), "at least one");
    }

    @Test
    void aTakeIsBoundedByTheMeasuredSizeNeverAboveMaxBatchSize() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 32, TWO_MS);

        assertEquals(15, policy.limitedTo(15).share(100, 1), "a backlog is taken at the measured size");
        assertEquals(3, policy.limitedTo(15).share(5, 0), "a short queue is still split fairly");
        assertEquals(1, policy.limitedTo(15).share(0, 1), "a lone input runs alone, at once");
        assertSame(policy, policy.limitedTo(64), "max_batch_size stays the bound");
        assertEquals(1, policy.limitedTo(0).maxBatch());
        assertFalse(policy.limitedTo(4).waitsForCompany(4, 1, 10), "a batch at its measured size is full");
    }

    @Test
    void onlyATakeThatLeftABacklogMeasuresItsSize() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 32, Duration.ZERO);

        assertTrue(BatchPolicy.measures(16, 3));
        assertFalse(BatchPolicy.measures(16, 0), "the take emptied the queue: the load sized it, not the choice");
        assertFalse(BatchPolicy.measures(0, 3));
    }

    @Test
    void theShareCannotOverflowOnAHugeQueue() {
        BatchPolicy policy = BatchPolicy.of(true, 3, 1024, Duration.ZERO);

        assertEquals(1024, policy.share(Integer.MAX_VALUE, 1));
    }

    @Test
    void anIdleReplicaNeverWaitsForCompany() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 8, Duration.ofSeconds(1));

        assertFalse(policy.waitsForCompany(1, 0, 5), "no other predictor is busy");
    }

    @Test
    void aPredictorWhoseTakeEmptiedTheQueueRunsAtOnce() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 8, Duration.ofSeconds(1));

        assertFalse(policy.waitsForCompany(2, 1, 0), "no backlog: waiting would only add latency");
    }

    @Test
    void aPredictorWaitsOnlyWithAWaitSetAnotherBusyABacklogAndRoomInItsBatch() {
        BatchPolicy waiting = BatchPolicy.of(true, 2, 8, TWO_MS);

        assertTrue(waiting.waitsForCompany(2, 1, 1));
        assertFalse(BatchPolicy.of(true, 2, 8, Duration.ZERO).waitsForCompany(2, 1, 1), "no wait set (the default)");
        assertFalse(waiting.waitsForCompany(8, 1, 1), "its batch is full");
        assertFalse(waiting.waitsForCompany(0, 1, 1), "it holds nothing (every task it took had ended)");
    }

    @Test
    void theWaitEndsAtItsDeadlineOrAsSoonAsTheBatchIsFull() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 4, TWO_MS);
        long deadline = policy.waitDeadline(now);

        assertEquals(TWO_MS.toNanos(), policy.waitLeft(2, deadline, now));
        now += 1_500_000;
        assertEquals(500_000, policy.waitLeft(3, deadline, now));
        assertTrue(policy.waitLeft(4, deadline, now) <= 0, "full: no more waiting");
        now += 500_000;
        assertTrue(policy.waitLeft(3, deadline, now) <= 0, "the wait is over");
    }

    @Test
    void aTunedPolicyTakesTheNewLimitAndWait() {
        BatchPolicy before = BatchPolicy.of(true, 2, 32, Duration.ZERO);
        BatchPolicy after = BatchPolicy.of(true, 2, 2, TWO_MS);

        assertEquals(32, before.share(100, 0));
        assertEquals(2, after.share(100, 0));
        assertEquals(TWO_MS.toNanos(), after.waitNanos());
    }

    @Test
    void rejectsSettingsThatCannotFormABatch() {
        assertThrows(IllegalArgumentException.class, () -> new BatchPolicy(0, 8, 0));
        assertThrows(IllegalArgumentException.class, () -> new BatchPolicy(2, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new BatchPolicy(2, 8, -1));
    }
}
