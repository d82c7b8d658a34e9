package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The batch limit a decision gives the predictor pool, and what a decision may hold. */
class BatchingDecisionTest {

    @Test
    void aSingleModelRunsOneInputWhateverTheDeploymentAllows() {
        BatchingDecision single = BatchingDecision.single("alone");
        assertEquals(1, single.preferredBatch());
        assertEquals(1, single.batchLimit(32));
        assertSame(single, single.withPreferredBatch(8, "measured"));
    }

    @Test
    void aMeasuredSizeLimitsBatchesBelowTheDeploymentsCeilingButNeverRaisesIt() {
        BatchingDecision probed = new BatchingDecision(true, true, "independent rows").withPreferredBatch(8, "probe");
        assertEquals(8, probed.preferredBatch());
        assertEquals("independent rows; probe", probed.reason());
        assertEquals(8, probed.batchLimit(32));
        assertEquals(4, probed.batchLimit(4));
    }

    @Test
    void withoutAPreferenceTheDeploymentAloneLimitsBatches() {
        BatchingDecision unprobed = new BatchingDecision(true, false, "invariance off");
        assertEquals(BatchingDecision.NO_PREFERENCE, unprobed.preferredBatch());
        assertEquals(64, unprobed.batchLimit(64));
        assertEquals("invariance off; still paid", unprobed.withEvidence("still paid").reason());
        assertEquals(BatchingDecision.NO_PREFERENCE, unprobed.withEvidence("still paid").preferredBatch());
    }

    @Test
    void refusesAPreferredBatchThatCannotBe() {
        assertThrows(IllegalArgumentException.class, () -> new BatchingDecision(false, true, 4, "alone"));
        assertThrows(IllegalArgumentException.class, () -> new BatchingDecision(true, true, -1, "rows"));
        assertThrows(IllegalArgumentException.class,
                () -> new BatchingDecision(true, true, "rows").withPreferredBatch(0, "probe"));
    }
}
