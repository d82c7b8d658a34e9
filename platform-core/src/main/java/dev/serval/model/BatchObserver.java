package dev.serval.model;

/** Told about every batched inference; called on the predictor thread, must be cheap and thread-safe. */
@FunctionalInterface
public interface BatchObserver {

    /**
     * @param inputs        inputs in the inference
     * @param realTokens    tokens the inputs really have
     * @param paddedTokens  padding tokens added so that they fit one tensor
     */
    void batch(int inputs, long realTokens, long paddedTokens);

    BatchObserver NONE = (inputs, realTokens, paddedTokens) -> { };
}
