package dev.serval.cache;

import dev.serval.spec.ServedModel;
import java.util.concurrent.CompletableFuture;

/**
 * One input on its way through the model, which identical inputs arriving meanwhile wait for instead of running it
 * again (single flight). Completed once by its leader, the request that runs it: with the result and the served model
 * that made it ({@link #producer()}), or exceptionally when the leader's run failed or ended early (cancelled, or past
 * the leader's deadline). A failure is the leader's, never the waiters': a waiter that sees one runs the input itself,
 * within its own deadline, so that a cancelled first caller cancels nobody else.
 *
 * <p>Threads: created by the leader's request thread and published through {@link ResultCache#join}; completed on the
 * thread that completes the leader's run (a predictor thread, or the caller's on a refusal or cancellation).
 * {@link #producer} is written before the completion that publishes it.
 */
public final class Flight<O> extends CompletableFuture<O> {

    final ResultKey key;
    private ServedModel producer;

    public Flight(ResultKey key) {
        this.key = key;
    }

    /** The served model that made the result; read only after this flight completed normally. */
    public ServedModel producer() {
        return producer;
    }

    void land(ServedModel producer, O value) {
        this.producer = producer;
        complete(value);
    }
}
