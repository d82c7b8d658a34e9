package dev.serval.batching;

/**
 * The token budgets of a replica's predictors, and when they need an input's tokens counted. Immutable and pure: the
 * predictor pool asks it with what it sees, as it asks the {@link BatchPolicy} how many inputs to take.
 *
 * <p>Counting costs a text's tokenisation ahead of its inference (the inference then reuses it, so nothing is
 * tokenised twice), and it is skipped wherever a budget cannot be passed: a model that reads no tokens
 * ({@code maxInputTokens} 0) never counts; a batch is counted only when {@code maxBatch} inputs of the most tokens one
 * input can have would pass {@link #perBatch}; a request only when its inputs at their most would pass
 * {@link #perRequest}. With the defaults and a truncating model, neither is ever counted.
 *
 * @param maxInputTokens the most tokens one input can make the model read ({@code Model.maxInputTokens}); 0 for a
 *                       model that reads no tokens
 * @param perBatch       {@code max_batch_tokens}: tokens one inference may hold, summed over its inputs; an input
 *                       alone always runs
 * @param perRequest     {@code max_tokens_per_request}: tokens one request may make the model read
 */
public record TokenBudget(long maxInputTokens, long perBatch, long perRequest) {

    public TokenBudget {
        if (maxInputTokens < 0) {
            throw new IllegalArgumentException("maxInputTokens must be >= 0, was " + maxInputTokens);
        }
        if (perBatch < 1 || perRequest < 1) {
            throw new IllegalArgumentException("budgets must be >= 1, were " + perBatch + " and " + perRequest);
        }
    }

    /** Whether batches of up to {@code maxBatch} inputs are counted: whether such a batch could pass the budget. */
    public boolean countsBatches(int maxBatch) {
        return maxInputTokens > 0 && maxBatch > 1 && maxBatch * maxInputTokens > perBatch;
    }

    /**
     * The budget a request of {@code inputs} inputs is held to: {@link #perRequest} when its inputs could pass it, else
     * 0 (it is not counted).
     */
    public long forRequest(int inputs) {
        return maxInputTokens > 0 && inputs * maxInputTokens > perRequest ? perRequest : 0;
    }

    /**
     * Whether an input of {@code tokens} joins a batch holding {@code taken} inputs of {@code batchTokens} tokens: an
     * empty batch takes any input; another takes it while the sum stays within {@link #perBatch}.
     */
    public boolean fits(int taken, long batchTokens, int tokens) {
        return taken == 0 || batchTokens + tokens <= perBatch;
    }
}
