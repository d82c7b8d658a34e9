package dev.serval.predictor;

import java.util.ArrayList;
import java.util.List;

/**
 * Runs a model on one input. <b>Not thread-safe</b>: one predictor belongs to one predictor thread for its
 * whole life, which creates it, calls it and closes it (DJL predictors hold per-thread native state).
 *
 * @param <I> the input type
 * @param <O> the output type
 */
public interface Predictor<I, O> extends AutoCloseable {

    /** Runs the model; an exception means the model failed on input the model had accepted. */
    O predict(I input) throws Exception;

    /**
     * Runs the model on several inputs, returning outputs in input order. By default one at a time; a model whose
     * {@link Model#batching()} is batched runs them in as few inferences as it can.
     */
    default List<O> predictBatch(List<I> inputs) throws Exception {
        List<O> outputs = new ArrayList<>(inputs.size());
        for (I input : inputs) {
            outputs.add(predict(input));
        }
        return outputs;
    }

    @Override
    void close();
}
