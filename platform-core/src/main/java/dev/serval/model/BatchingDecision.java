package dev.serval.model;

import java.util.Objects;

/**
 * How a model's inputs are run, decided when it loads, and why.
 *
 * @param batched        whether several inputs may run in one inference (padded, grouped by length)
 * @param batchInvariant whether an input's output is the same (within 1e-5 per element) whatever it runs with
 * @param reason         what the decision rests on: the row-coupling operators found, the probe's result, the setting
 */
public record BatchingDecision(boolean batched, boolean batchInvariant, String reason) {

    public BatchingDecision {
        Objects.requireNonNull(reason, "reason");
    }

    /** Every input alone: invariant by construction. */
    public static BatchingDecision single(String reason) {
        return new BatchingDecision(false, true, reason);
    }

    /** A name for status and metadata: {@code single} or {@code batched}. */
    public String mode() {
        return batched ? "batched" : "single";
    }
}
