package dev.serval.model;

import java.util.Objects;

/**
 * How a model's inputs are run, decided when it loads, and why.
 *
 * @param batched        whether several inputs may run in one inference (padded, grouped by length)
 * @param batchInvariant whether an input's output is the same (within 1e-5 per element) whatever it runs with
 * @param preferredBatch the most inputs one inference should take on this CPU as the load measured it: 1 when not
 *                       batched; for a batched model 1 when the load's probe found that batching does not pay, or
 *                       {@link #NO_PREFERENCE} when it does or was not measured ({@link #batchLimit}). For a batched
 *                       model it is where the batch size measured while serving starts ({@code batching.BatchCosts});
 *                       the deployment's {@code max_batch_size} bounds it
 * @param reason         what the decision rests on: the row-coupling operators found, the probe's result, the setting,
 *                       and the batch sizes measured
 */
public record BatchingDecision(boolean batched, boolean batchInvariant, int preferredBatch, String reason) {

    /**
     * {@link #preferredBatch} of a batched model whose batch sizes were not measured, or for which batching pays: the
     * deployment's {@code max_batch_size} alone limits its batches.
     */
    public static final int NO_PREFERENCE = 0;

    /** @throws IllegalArgumentException when the preferred batch is negative, or not 1 for a model that runs alone */
    public BatchingDecision {
        Objects.requireNonNull(reason, "reason");
        if (batched ? preferredBatch < NO_PREFERENCE : preferredBatch != 1) {
            throw new IllegalArgumentException("preferredBatch must be " + (batched ? ">= 0" : "1 when not batched")
                    + ", was " + preferredBatch);
        }
    }

    /** A decision without a preferred batch size: a batched model then takes up to the deployment's limit. */
    public BatchingDecision(boolean batched, boolean batchInvariant, String reason) {
        this(batched, batchInvariant, batched ? NO_PREFERENCE : 1, reason);
    }

    /** Every input alone: invariant by construction. */
    public static BatchingDecision single(String reason) {
        return new BatchingDecision(false, true, 1, reason);
    }

    /**
     * This decision with a measured preferred batch size and what the measurement found appended to the reason;
     * {@code this} when not batched (nothing to size).
     *
     * @throws IllegalArgumentException when {@code preferredBatch} is below 1
     */
    public BatchingDecision withPreferredBatch(int preferredBatch, String evidence) {
        if (preferredBatch < 1) {
            throw new IllegalArgumentException("a measured preferred batch is at least 1, was " + preferredBatch);
        }
        return batched ? new BatchingDecision(true, batchInvariant, preferredBatch, reason + "; " + evidence) : this;
    }

    /** This decision with {@code evidence} appended to its reason. */
    public BatchingDecision withEvidence(String evidence) {
        return new BatchingDecision(batched, batchInvariant, preferredBatch, reason + "; " + evidence);
    }

    /**
     * Inputs one inference takes under a deployment allowing {@code maxBatchSize}, as the load measured it (where the
     * batch size measured while serving starts): the smaller of the two when batched with a preference,
     * {@code maxBatchSize} when batched without one, 1 when not batched.
     */
    public int batchLimit(int maxBatchSize) {
        if (!batched) {
            return 1;
        }
        return preferredBatch == NO_PREFERENCE ? maxBatchSize : Math.min(maxBatchSize, preferredBatch);
    }

    /** A name for status and metadata: {@code single} or {@code batched}. */
    public String mode() {
        return batched ? "batched" : "single";
    }
}
