package dev.serval.replica;

/**
 * One input of a {@link PoolRequest}, by index, as it waits in an {@link InputQueue}: the input itself stays with the
 * request, which drops it when it ends. A task with no request is a stop signal for the predictor that takes it.
 * Immutable.
 *
 * @param queuedAt when it was queued ({@code nanoTime}), for the predictor-wait metric
 */
record InputTask<I, O>(PoolRequest<I, O> request, int index, long queuedAt) {

    private static final InputTask<?, ?> STOP = new InputTask<>(null, -1, 0);

    /** The stop signal: the predictor that takes it finishes its batch and exits. */
    @SuppressWarnings("unchecked")
    static <I, O> InputTask<I, O> stop() {
        return (InputTask<I, O>) STOP;
    }

    boolean isStop() {
        return request == null;
    }
}
