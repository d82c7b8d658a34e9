package dev.serval.replica;

import dev.serval.model.InputTokens;

/**
 * One input of a {@link PoolRequest}, by index, as it waits in an {@link InputQueue}: the input itself stays with the
 * request, which drops it when it ends. A task with no request is a stop signal for the predictor that takes it.
 * Immutable.
 *
 * @param queuedAt when it was queued ({@code nanoTime}), for the predictor-wait metric
 * @param tokens   the input as the predictor that claimed it tokenised it for a token budget
 *                 ({@link dev.serval.model.Predictor#tokens}), handed to that predictor's inference; null when not
 *                 counted
 */
record InputTask<I, O>(PoolRequest<I, O> request, int index, long queuedAt, InputTokens tokens) {

    private static final InputTask<?, ?> STOP = new InputTask<>(null, -1, 0);

    /** A task not counted yet. */
    InputTask(PoolRequest<I, O> request, int index, long queuedAt) {
        this(request, index, queuedAt, null);
    }

    /** The stop signal: the predictor that takes it finishes its batch and exits. */
    @SuppressWarnings("unchecked")
    static <I, O> InputTask<I, O> stop() {
        return (InputTask<I, O>) STOP;
    }

    boolean isStop() {
        return request == null;
    }

    /** This task with its input's {@code counted} tokens. */
    InputTask<I, O> withTokens(InputTokens counted) {
        return counted == tokens ? this : new InputTask<>(request, index, queuedAt, counted);
    }
}
