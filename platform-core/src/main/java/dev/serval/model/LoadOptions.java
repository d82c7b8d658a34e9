package dev.serval.model;

import java.util.Objects;

/**
 * What a deployment asks of the model it loads, on top of the model's descriptor: the settings that change what is
 * loaded, and so belong to the key under which replicas share one loaded model. An immutable value; start from
 * {@link #defaults()} and change what differs with the withers, which return {@code this} when nothing changes.
 *
 * @param maxLength       tokens a text model keeps per text (per window when chunking), special tokens included; 0
 *                        for the descriptor's {@code max_length}. Text kinds only
 * @param longInputs      what a text model does with a text longer than {@code maxLength}. Text kinds only
 * @param chunkReduction  how a text classifier combines the windows of a chunked text. Text classifiers only
 * @param intraOpThreads  ONNX Runtime threads inside one inference, 1 to {@value #MAX_THREADS}
 * @param idleIntraOpThreads ONNX Runtime threads of an inference that runs while the rest of its replica is idle
 *                        ({@link Predictor#widen}), 0 to {@value #MAX_THREADS}: a model loads a second session of
 *                        this width (capped at the machine's processors) when it is more than {@code intraOpThreads};
 *                        0 for none
 * @param batchInvariance whether an input's output must not depend on what it runs with; when false, a text model
 *                        batches texts even if its graph couples batch rows
 */
public record LoadOptions(int maxLength, LongInputs longInputs, ChunkReduction chunkReduction, int intraOpThreads,
        int idleIntraOpThreads, boolean batchInvariance) {

    /** The most intra-op threads accepted (a deployment's {@code intra_op_threads} has the same cap). */
    public static final int MAX_THREADS = 1024;

    private static final LoadOptions DEFAULTS =
            new LoadOptions(0, LongInputs.truncate(), ChunkReduction.MEAN, 1, 0, true);

    /** @throws IllegalArgumentException naming the setting and the value, when a number is out of range */
    public LoadOptions {
        if (maxLength < 0) {
            throw new IllegalArgumentException("maxLength must be 0 (the model's own) or more, was " + maxLength);
        }
        Objects.requireNonNull(longInputs, "longInputs");
        Objects.requireNonNull(chunkReduction, "chunkReduction");
        if (intraOpThreads < 1 || intraOpThreads > MAX_THREADS) {
            throw new IllegalArgumentException("intraOpThreads must be between 1 and " + MAX_THREADS + ", was "
                    + intraOpThreads);
        }
        if (idleIntraOpThreads < 0 || idleIntraOpThreads > MAX_THREADS) {
            throw new IllegalArgumentException("idleIntraOpThreads must be between 0 and " + MAX_THREADS + ", was "
                    + idleIntraOpThreads);
        }
    }

    /**
     * The descriptor's maximum length, long texts truncated, chunked classifications averaged ({@code mean}), one
     * intra-op thread and no wider session, batch invariant.
     */
    public static LoadOptions defaults() {
        return DEFAULTS;
    }

    public LoadOptions withMaxLength(int maxLength) {
        return maxLength == this.maxLength ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    public LoadOptions withLongInputs(LongInputs longInputs) {
        return longInputs.equals(this.longInputs) ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    public LoadOptions withChunkReduction(ChunkReduction chunkReduction) {
        return chunkReduction == this.chunkReduction ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    public LoadOptions withIntraOpThreads(int intraOpThreads) {
        return intraOpThreads == this.intraOpThreads ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    public LoadOptions withIdleIntraOpThreads(int idleIntraOpThreads) {
        return idleIntraOpThreads == this.idleIntraOpThreads ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    /**
     * The width of the second session a model loads for inferences on an idle replica's cores: {@code
     * idleIntraOpThreads} capped at {@code processors}, or 0 when that is not more than {@code intraOpThreads} (no
     * second session).
     */
    public int idleSessionThreads(int processors) {
        int threads = Math.min(idleIntraOpThreads, processors);
        return threads > intraOpThreads ? threads : 0;
    }

    public LoadOptions withBatchInvariance(boolean batchInvariance) {
        return batchInvariance == this.batchInvariance ? this
                : new LoadOptions(maxLength, longInputs, chunkReduction, intraOpThreads, idleIntraOpThreads,
                        batchInvariance);
    }

    /** These options with {@code maxLength} when they leave it to the model ({@code 0}), as they are otherwise. */
    public LoadOptions orMaxLength(int descriptorMaxLength) {
        return maxLength > 0 ? this : withMaxLength(descriptorMaxLength);
    }
}
