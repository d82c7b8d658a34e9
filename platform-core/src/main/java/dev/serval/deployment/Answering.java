package dev.serval.deployment;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The caller's future for a routed request whose answer the deployment maps before handing it over (output tensors,
 * checked embeddings). Ending it early ends the routed request too: cancelling it (the client went away) or failing it
 * (its deadline) takes the request out of the queue or cancels its run, exactly as ending the router's own future
 * does.
 *
 * <p>Threads: the mapping runs on the thread that completes the routed request (a predictor thread); an early end
 * runs on the caller's thread. Whichever completes this future first wins; the other's completion is a no-op.
 */
final class Answering<R, T> extends CompletableFuture<T> {

    private final CompletableFuture<R> routed;

    private Answering(CompletableFuture<R> routed) {
        this.routed = routed;
    }

    /** A future completed with {@code map} of {@code routed}'s result, or with its failure (unwrapped). */
    static <R, T> Answering<R, T> of(CompletableFuture<R> routed, Function<R, T> map) {
        Answering<R, T> answering = new Answering<>(routed);
        routed.whenComplete((result, failure) -> {
            if (failure != null) {
                boolean wrapped = failure instanceof CompletionException && failure.getCause() != null;
                answering.end(wrapped ? failure.getCause() : failure);
                return;
            }
            T mapped;
            try {
                mapped = map.apply(result);
            } catch (Throwable e) {
                answering.end(e);
                return;
            }
            answering.complete(mapped);
        });
        return answering;
    }

    private void end(Throwable failure) {
        super.completeExceptionally(failure);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            routed.cancel(mayInterruptIfRunning);
        }
        return cancelled;
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
        boolean ended = super.completeExceptionally(failure);
        if (ended) {
            routed.completeExceptionally(failure);
        }
        return ended;
    }
}
