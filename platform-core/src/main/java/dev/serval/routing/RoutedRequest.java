package dev.serval.routing;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;

/**
 * One request as the {@link Router} handles it: the caller's future, and while it waits its place in the router's
 * queue. When the caller ends it early, by cancelling it (the client went away) or by failing it (its deadline
 * passed), it leaves the queue at once if it is queued (winning its claim) or the replica's run is cancelled, so
 * inputs no predictor has started are skipped.
 *
 * <p>Design. {@link #claim} goes QUEUED to OUT once, by CAS: the drain that dispatches it, the router failing its
 * queue, or its own caller ending it wins it, and only the winner gives back the queue place (a request dispatched at
 * once is OUT from the start). {@link #inputs} is written before the request is queued and read and cleared only by
 * the claim's winner. {@link #tokens}, what it took of the router's pending tokens, goes to 0 once, by getAndSet
 * ({@link #releaseTokens}): on the thread that completes its run, before the caller's future completes, or on the
 * thread that ends it first (cancelled, failed). {@link #upstream} and {@link #replica} are written once by the
 * dispatching thread, before the run can complete the request; {@link #since} and {@link #deadlineNanos} are final.
 * Nothing here locks.
 */
final class RoutedRequest<I, O> extends CompletableFuture<List<O>> {

    private static final int OUT = 0;
    private static final int QUEUED = 1;
    private static final VarHandle CLAIM;
    private static final VarHandle TOKENS;

    static {
        try {
            CLAIM = MethodHandles.lookup().findVarHandle(RoutedRequest.class, "claim", int.class);
            TOKENS = MethodHandles.lookup().findVarHandle(RoutedRequest.class, "tokens", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Router<I, O> router;
    /** When it was queued ({@code nanoTime}); 0 for a request dispatched at once. */
    final long since;
    /** Until when it may run, on the router's clock; {@code CallContext.NO_DEADLINE} without a deadline. */
    final long deadlineNanos;
    private List<I> inputs;
    @SuppressWarnings("unused") // through CLAIM
    private volatile int claim;
    /** The router's pending tokens this request holds; 0 once given back (or for a request that costs nothing). */
    private volatile int tokens;
    /** The replica's run of it; written once by the dispatching thread. */
    volatile CompletableFuture<List<O>> upstream;
    /** The replica that runs it; written once by the dispatching thread, before the run can complete it. */
    volatile RoutableReplica<?, O> replica;

    /** A request dispatched at once, never queued, holding {@code tokens} of the router's pending tokens. */
    RoutedRequest(Router<I, O> router, long deadlineNanos, int tokens) {
        this.router = router;
        this.since = 0;
        this.deadlineNanos = deadlineNanos;
        this.tokens = tokens;
    }

    /** A request about to be queued, since {@code since}, holding {@code tokens} of the router's pending tokens. */
    RoutedRequest(Router<I, O> router, List<I> inputs, long since, long deadlineNanos, int tokens) {
        this.router = router;
        this.inputs = inputs;
        this.since = since;
        this.deadlineNanos = deadlineNanos;
        this.tokens = tokens;
        this.claim = QUEUED;
    }

    /** Takes the request out of the queue's count; true for exactly one caller, never for a request never queued. */
    boolean claim() {
        return CLAIM.compareAndSet(this, QUEUED, OUT);
    }

    /** The claim's winner only: the inputs, which the request no longer holds. */
    List<I> takeInputs() {
        List<I> taken = inputs;
        inputs = null;
        return taken;
    }

    /** Gives the tokens this request holds back to the router; only the first call gives any. */
    void releaseTokens() {
        if (tokens != 0) {
            router.pending.release((int) TOKENS.getAndSet(this, 0));
        }
    }

    @Override
    public boolean complete(List<O> outputs) {
        boolean endedHere = super.complete(outputs);
        if (endedHere) {
            releaseTokens();
        }
        return endedHere;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return ended(super.cancel(mayInterruptIfRunning));
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
        return ended(super.completeExceptionally(failure));
    }

    private boolean ended(boolean endedHere) {
        if (endedHere) {
            releaseTokens();
            if (claim()) {
                takeInputs();
                router.left(this);
            }
            CompletableFuture<List<O>> run = upstream;
            if (run != null) {
                run.cancel(false);
            }
        }
        return endedHere;
    }

    /**
     * The end of a replica's run: releases the slot and the request's tokens, records the completion, dispatches
     * waiting work, then answers the caller. Runs on the thread that completes the run (a predictor thread). One per
     * dispatched request.
     */
    record Completion<I, O>(Router<I, O> router, RoutableReplica<I, O> replica, RoutedRequest<I, O> result)
            implements BiConsumer<List<O>, Throwable> {
        @Override
        public void accept(List<O> outputs, Throwable failure) {
            replica.release();
            result.releaseTokens(); // before the caller sees the answer: its next request finds them back
            router.completed();
            router.drain();
            if (failure != null) {
                result.completeExceptionally(failure instanceof CompletionException c
                        && c.getCause() != null ? c.getCause() : failure);
            } else {
                result.complete(outputs);
            }
        }
    }
}
