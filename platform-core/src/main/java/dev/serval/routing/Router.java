package dev.serval.routing;

import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * Routes one deployment's requests to its replicas, with bounded admission at every step.
 *
 * <p>Design. {@link #snapshot} holds the routable replicas; only the controller writes it ({@link #publish}),
 * request threads read it once per request. A request takes a slot on a replica chosen by power of two choices
 * (a CAS on that replica's in-flight count, see {@link RoutingSnapshot#choose()}). When both chosen replicas are
 * full it joins {@link #waiting}, whose size {@link #queued} is bounded by {@code max_queued_requests} with a CAS
 * taken before the request is added; when that bound is reached it is refused at once with {@link Overloaded}.
 * Queued requests are dispatched by {@link #drain()}, which runs after every event that can make room (a request
 * finished, a request queued, a snapshot published) and scans every replica for a free slot. Because each such
 * event runs {@code drain()} after making its change visible, a request is never left queued while a replica has a
 * free slot and nothing else is going to look.
 *
 * <p>Threads: any thread calls {@link #submit}; completions run {@link #drain()} on predictor threads; the
 * controller thread calls {@link #publish} and {@link #close}. {@link #completionIntervalNanos} is written by
 * completions without coordination and read for Retry-After estimates: best-effort by design.
 */
public final class Router<I, O> {

    private final String deployment;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final AtomicReference<RoutingSnapshot<I, O>> snapshot = new AtomicReference<>(RoutingSnapshot.empty());
    private final ConcurrentLinkedQueue<Waiting<I, O>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private volatile int maxQueued;
    private volatile boolean closed;
    private volatile long lastCompletionNanos;
    private volatile long completionIntervalNanos = 10_000_000L;

    public Router(String deployment, int maxQueuedRequests, LongSupplier nanoTime) {
        this(deployment, maxQueuedRequests, nanoTime, DeploymentMetrics.discarding(deployment));
    }

    /** @param metrics records queue waits and inputs per request */
    public Router(String deployment, int maxQueuedRequests, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.maxQueued = maxQueuedRequests;
        this.nanoTime = nanoTime;
        this.metrics = metrics;
        this.lastCompletionNanos = nanoTime.getAsLong();
    }

    /**
     * Sends {@code inputs} to a replica now, or queues them until one has room. Never blocks.
     *
     * @return completes with the outputs, or exceptionally with the replica's failure or {@link NotReady} if the
     *     deployment closes while the request waits
     * @throws Overloaded when every chosen replica is full and the queue is too
     * @throws NotReady   when the deployment has no routable replica, or is closed
     */
    public CompletableFuture<List<O>> submit(List<I> inputs) {
        RoutingSnapshot<I, O> current = snapshot.get();
        if (closed || current.isEmpty()) {
            throw new NotReady(closed ? "model '" + deployment + "' is shutting down"
                    : "model '" + deployment + "' has no running replica");
        }
        metrics.requestInputs(inputs.size());
        RoutableReplica<I, O> replica = current.choose();
        if (replica != null) {
            metrics.queueWait(0);
            return dispatch(replica, inputs, new Routed<>());
        }
        int limit = maxQueued;
        for (;;) {
            int now = queued.get();
            if (now >= limit) {
                throw new Overloaded("model '" + deployment + "' is overloaded: all " + current.size()
                        + " replicas are at max-ongoing-requests and " + now + " requests are queued (max-queued-requests "
                        + limit + ")", retryAfter(now));
            }
            if (queued.compareAndSet(now, now + 1)) {
                break;
            }
        }
        Waiting<I, O> request = new Waiting<>(inputs, new Routed<>(), nanoTime.getAsLong());
        waiting.add(request);
        drain();
        if (closed) {
            failWaiting();
        }
        return request.result;
    }

    private CompletableFuture<List<O>> dispatch(RoutableReplica<I, O> replica, List<I> inputs, Routed<O> result) {
        CompletableFuture<List<O>> run;
        try {
            run = replica.run(inputs);
        } catch (RuntimeException e) {
            replica.release();
            drain();
            result.completeExceptionally(e);
            return result;
        }
        result.upstream = run;
        result.replica = replica;
        run.whenComplete(new Completion<>(this, replica, result));
        return result;
    }

    /**
     * The model version of the replica that took a request, given the future {@link #submit} returned; empty while
     * the request waits in the queue or when it never reached a replica.
     */
    public static java.util.Optional<String> servedVersion(CompletableFuture<?> result) {
        RoutableReplica<?, ?> replica = result instanceof Routed<?> routed ? routed.replica : null;
        return replica == null ? java.util.Optional.empty() : java.util.Optional.of(replica.version());
    }

    /**
     * The replica that runs (or ran) a request, given the future {@link #submit} returned: its model answers it. Null
     * while the request waits in the queue, and when no replica ran it (none took it, or the one chosen refused it:
     * {@link RoutableReplica#run} threw). Set before the run can complete the future.
     */
    @SuppressWarnings("unchecked")
    public static <I, O> RoutableReplica<I, O> servedBy(CompletableFuture<List<O>> result) {
        return result instanceof Routed<O> routed ? (RoutableReplica<I, O>) routed.replica : null;
    }

    /** Dispatches queued requests while some replica has a free slot. */
    public void drain() {
        while (queued.get() > 0) {
            RoutableReplica<I, O> replica = snapshot.get().anyWithCapacity();
            if (replica == null) {
                return;
            }
            Waiting<I, O> next = waiting.poll();
            if (next == null) {
                replica.release();
                return;
            }
            queued.decrementAndGet();
            if (next.result.isDone()) {
                replica.release();
                continue;
            }
            metrics.queueWait(nanoTime.getAsLong() - next.since);
            dispatch(replica, next.inputs, next.result);
        }
    }

    /**
     * Refuses now, as {@link #submit} would, when the queue is at its bound: a best-effort check (a slot may free a
     * moment later) that lets the edge refuse on a request's headers, before reading or decoding its body. Reads two
     * fields; allocates only the refusal.
     *
     * @throws Overloaded when {@code max_queued_requests} requests are queued
     */
    public void refuseIfFull() {
        int limit = maxQueued;
        int now = queued.get();
        if (now >= limit) {
            throw new Overloaded("model '" + deployment + "' is overloaded: " + now + " requests are queued "
                    + "(max-queued-requests " + limit + ")", retryAfter(now));
        }
    }

    /** Requests waiting for a free slot. */
    public int queuedRequests() {
        return queued.get();
    }

    /** Replicas currently routable. */
    public int routableReplicas() {
        return snapshot.get().size();
    }

    public RoutingSnapshot<I, O> snapshot() {
        return snapshot.get();
    }

    /** Controller thread only: swaps in a new set of routable replicas, then dispatches what that made room for. */
    public void publish(RoutingSnapshot<I, O> next) {
        snapshot.set(next);
        drain();
    }

    /** Changes the queue bound; requests already queued stay. */
    public void maxQueuedRequests(int limit) {
        maxQueued = limit;
    }

    /** Refuses new requests and fails queued ones with {@link NotReady}. Requests already on replicas finish. */
    public void close() {
        closed = true;
        failWaiting();
    }

    /**
     * Fails every queued request with {@link NotReady} carrying {@code reason}: for a deployment that has no replica
     * and none starting, where waiting would never end. New requests are refused by {@link #submit} as usual.
     */
    public void failQueued(String reason) {
        Waiting<I, O> next;
        while ((next = waiting.poll()) != null) {
            queued.decrementAndGet();
            next.result.completeExceptionally(new NotReady(reason));
        }
    }

    private void failWaiting() {
        failQueued("model '" + deployment + "' shut down before serving this request");
    }

    private void completed() {
        long now = nanoTime.getAsLong();
        long interval = now - lastCompletionNanos;
        lastCompletionNanos = now;
        completionIntervalNanos += (interval - completionIntervalNanos) >> 4;
    }

    /** Time for {@code queuedNow} requests to drain at the observed completion rate: 1 ms to 60 s. */
    private Duration retryAfter(int queuedNow) {
        long nanos = (queuedNow + 1L) * Math.max(completionIntervalNanos, 0);
        return Duration.ofMillis(Math.max(1, Math.min(60_000, (nanos + 999_999L) / 1_000_000L)));
    }

    private record Waiting<I, O>(List<I> inputs, Routed<O> result, long since) {
    }

    /**
     * The caller's future. When the caller ends it early, by cancelling it (the client went away) or by failing it
     * (its deadline passed), the replica's run is cancelled too, so inputs no predictor has started are skipped; a
     * request ended while queued is skipped by {@link #drain()}.
     */
    private static final class Routed<O> extends CompletableFuture<List<O>> {
        private volatile CompletableFuture<List<O>> upstream;
        private volatile RoutableReplica<?, O> replica;

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return stopUpstream(super.cancel(mayInterruptIfRunning));
        }

        @Override
        public boolean completeExceptionally(Throwable failure) {
            return stopUpstream(super.completeExceptionally(failure));
        }

        private boolean stopUpstream(boolean endedHere) {
            CompletableFuture<List<O>> run = upstream;
            if (endedHere && run != null) {
                run.cancel(false);
            }
            return endedHere;
        }
    }

    /** Releases the slot, records the completion, dispatches waiting work, then answers the caller. */
    private record Completion<I, O>(Router<I, O> router, RoutableReplica<I, O> replica, CompletableFuture<List<O>> result)
            implements BiConsumer<List<O>, Throwable> {
        @Override
        public void accept(List<O> outputs, Throwable failure) {
            replica.release();
            router.completed();
            router.drain();
            if (failure != null) {
                result.completeExceptionally(failure instanceof java.util.concurrent.CompletionException c
                        && c.getCause() != null ? c.getCause() : failure);
            } else {
                result.complete(outputs);
            }
        }
    }
}
