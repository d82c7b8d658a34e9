package dev.serval.request;

import dev.serval.tensor.Tensors;
import java.util.concurrent.CompletableFuture;

/**
 * One request to a deployment that calls others (a pipeline, a custom handler): its tensors, its
 * {@link CallContext}, and a signal that fires when the request is over, however it ended (answered, failed, cancelled
 * by its client, past its deadline), so that the calls it started can be cancelled. The input type of the composite
 * kinds ({@link InvocationIO}).
 *
 * <p>Threads: created on the caller's thread; read by the predictor thread that runs it; {@link #end} is called by
 * whichever thread completes the request's future (a predictor thread, the edge's timer, the client's disconnect), at
 * most once effectively. Callbacks added with {@link #onEnd} run on that thread, or at once when it already ended.
 */
public final class Invocation {

    private final Tensors tensors;
    private final CallContext context;
    private final CompletableFuture<Void> ended = new CompletableFuture<>();

    public Invocation(Tensors tensors, CallContext context) {
        this.tensors = tensors;
        this.context = context;
    }

    public Tensors tensors() {
        return tensors;
    }

    public CallContext context() {
        return context;
    }

    /** Marks the request over: runs the {@link #onEnd} callbacks. Idempotent. */
    public void end() {
        ended.complete(null);
    }

    /** Whether the request is over. */
    public boolean isEnded() {
        return ended.isDone();
    }

    /** Runs {@code action} when the request is over (at once, on this thread, if it is). */
    public void onEnd(Runnable action) {
        ended.thenRun(action);
    }
}
