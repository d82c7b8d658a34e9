package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;

/**
 * How a replica's predictors group inputs into inferences. The batch size and wait apply to running replicas in
 * place; batch invariance is part of the replica's shape (a change rolls the replicas).
 *
 * @param batchInvariance  whether an input's output must not depend on what it runs with; default true
 * @param maxBatchSize     inputs one inference may take when the model batches; default 32
 * @param batchWaitTimeout how long a predictor may wait to fill a batch while another predictor of its replica is busy
 *                         and inputs are still queued (an idle replica never waits, nor does a predictor whose take
 *                         emptied the queue); default 0: a batch is what is queued when a predictor comes free
 * @param maxBatchTokens   tokens one inference of a text model that batches may hold, summed over its inputs (each
 *                         input's tokens as the model reads them); an input alone always runs; default
 *                         {@value #DEFAULT_MAX_BATCH_TOKENS} (TEI's), which {@code max_batch_size} inputs of up to 512
 *                         tokens fit: it binds only when a deployment raises the batch size or the maximum length
 */
public record BatchingSpec(boolean batchInvariance, int maxBatchSize, Duration batchWaitTimeout, int maxBatchTokens) {

    public static final IntRange MAX_BATCH_SIZE = new IntRange("max_batch_size", 1, 1024);
    public static final DurationRange BATCH_WAIT_TIMEOUT = new DurationRange("batch_wait_timeout", Duration.ZERO,
            Duration.ofSeconds(1));

    public static final IntRange MAX_BATCH_TOKENS = new IntRange("max_batch_tokens", 1, 1_000_000_000);
    public static final int DEFAULT_MAX_BATCH_TOKENS = 16_384;

    public static final BatchingSpec DEFAULTS = new BatchingSpec(true, 32, Duration.ZERO);

    public BatchingSpec {
        MAX_BATCH_SIZE.check(maxBatchSize);
        BATCH_WAIT_TIMEOUT.check(batchWaitTimeout);
        MAX_BATCH_TOKENS.check(maxBatchTokens);
    }

    /** With the default {@code max_batch_tokens}. */
    public BatchingSpec(boolean batchInvariance, int maxBatchSize, Duration batchWaitTimeout) {
        this(batchInvariance, maxBatchSize, batchWaitTimeout, DEFAULT_MAX_BATCH_TOKENS);
    }

    public BatchingSpec withBatchInvariance(boolean invariance) {
        return invariance == batchInvariance ? this
                : new BatchingSpec(invariance, maxBatchSize, batchWaitTimeout, maxBatchTokens);
    }

    public BatchingSpec withMaxBatchSize(int size) {
        return size == maxBatchSize ? this : new BatchingSpec(batchInvariance, size, batchWaitTimeout, maxBatchTokens);
    }

    public BatchingSpec withBatchWaitTimeout(Duration wait) {
        return Objects.equals(wait, batchWaitTimeout) ? this
                : new BatchingSpec(batchInvariance, maxBatchSize, wait, maxBatchTokens);
    }

    public BatchingSpec withMaxBatchTokens(int tokens) {
        return tokens == maxBatchTokens ? this
                : new BatchingSpec(batchInvariance, maxBatchSize, batchWaitTimeout, tokens);
    }
}
