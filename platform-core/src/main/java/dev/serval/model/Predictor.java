package dev.serval.model;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Runs a model on one input. <b>Not thread-safe</b>: one predictor belongs to one predictor thread for its
 * whole life, which creates it, calls it and closes it (DJL predictors hold per-thread native state).
 *
 * @param <I> the input type
 * @param <O> the output type
 */
public interface Predictor<I, O> extends AutoCloseable {

    /**
     * Runs the model; an exception means the model failed on input the model had accepted, except
     * {@link dev.serval.error.InvalidInput}, which means the input is one the model cannot take, found only while
     * running it (a text that splits into too many windows): that fails only its request, as a client error.
     */
    O predict(I input) throws Exception;

    /**
     * Runs the model for a caller that may stop wanting the result: a model whose work on one input comes in steps
     * (the windows of a chunked text) checks {@code abandoned} between steps and, once it is true, stops and returns
     * null, which the caller discards. By default, {@link #predict(Object)}: one step, nothing to check.
     *
     * @param abandoned true once the input's request is done (cancelled, failed, past its deadline); cheap, and safe
     *                  to call from the predictor's thread at any time
     */
    default O predict(I input, BooleanSupplier abandoned) throws Exception {
        return predict(input);
    }

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

    /**
     * Tokenises {@code input} as this predictor's inference of it would, and counts its tokens: for a token budget that
     * must know an input's tokens before it runs. The result is handed back to this predictor's inference of the same
     * input ({@link #predict(Object, InputTokens, BooleanSupplier)}, {@link #predictBatch(List, List)}), which then
     * does not tokenise it again. Called only for a model whose {@link Model#maxInputTokens} is above 0; by default
     * null (nothing counted).
     *
     * @throws dev.serval.error.InvalidInput when tokenising shows input the model cannot take (a text that splits into
     *                                       too many windows), as its inference would
     */
    default InputTokens tokens(I input) throws Exception {
        return null;
    }

    /**
     * {@link #predict(Object, BooleanSupplier)} of an input already tokenised by {@link #tokens}: {@code tokens} is
     * what this predictor returned for it, or null when it was not counted. By default the tokens are not used.
     */
    default O predict(I input, InputTokens tokens, BooleanSupplier abandoned) throws Exception {
        return predict(input, abandoned);
    }

    /**
     * {@link #predictBatch(List)} of inputs some of which are already tokenised: {@code tokens} is empty (none
     * counted) or holds, for each input in order, what {@link #tokens} returned for it on this predictor or null. By
     * default the tokens are not used.
     */
    default List<O> predictBatch(List<I> inputs, List<InputTokens> tokens) throws Exception {
        return predictBatch(inputs);
    }

    /**
     * Runs this predictor's next inferences, until called again, on the model's wider session ({@code true}: the
     * replica lends the cores of its idle predictors to this one) or on its own share ({@code false}, the state a
     * predictor starts in). Called by the predictor pool between inferences, only for a model that
     * {@link Model#widens()}; answers do not depend on it. By default nothing changes.
     */
    default void widen(boolean wide) {
    }

    @Override
    void close();
}
