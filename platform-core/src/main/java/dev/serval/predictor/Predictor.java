package dev.serval.predictor;

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

    @Override
    void close();
}
