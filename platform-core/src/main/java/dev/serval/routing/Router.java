package dev.serval.routing;

import dev.serval.admission.BoundedCount;
import dev.serval.admission.RetryAfter;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.request.CallContext;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Routes one deployment's requests to its replicas, with bounded admission at every step.
 *
 * <p>Design. {@link #snapshot} holds the routable replicas; only the controller writes it ({@link #publish}),
 * request threads read it once per request. A request takes a slot on a replica chosen by power of two choices
 * (a CAS on that replica's in-flight count, see {@link RoutingSnapshot#choose()}). When both chosen replicas are
 * full it joins {@link #waiting}, whose live size {@link #queued} is a {@link BoundedCount} of
 * {@code max_queued_requests}, taken by CAS before the request is added; when that bound is reached it is refused at
 * once with {@link Overloaded} and the {@link RetryAfter} estimate of {@link #pace}.
 *
 * <p>Dispatching queued requests. {@link #drain()} runs after every event that can make room or work (a request
 * finished, a request queued, a snapshot published), after that event is visible. Drains are serialised by the
 * work-in-progress counter {@link #drainRequests} (the RxJava/Reactor drain loop): the thread that raises it from 0
 * drains, every other thread only adds one and returns, and the draining thread drains again until it takes the
 * counter back to 0. So an event that happens while a drain is running (a request queued just after the drain found
 * the queue empty, a slot given back just after the drain found every replica full) is always looked at once more:
 * no request is left queued beside a free slot. A drain takes a slot first ({@link RoutingSnapshot#anyWithCapacity()})
 * and then a request; it gives the slot back when no live request is left. Uncontended, a drain with nothing queued
 * reads {@link #queued} once and returns; otherwise it costs two atomic adds; it never locks or allocates.
 *
 * <p>Leaving the queue. Each queued request ({@link RoutedRequest}) carries a claim flag that goes from QUEUED to OUT once:
 * the drain that dispatches it, {@link #failQueued} or its own caller ending it (cancelled, or failed by its deadline)
 * wins it, and only the winner decrements {@link #queued}. A caller that ends its request removes it from
 * {@link #waiting} at once and drops its inputs, so an abandoned request holds neither a queue place nor memory. A
 * request whose deadline has passed when a drain takes it is failed with {@link DeadlineExceeded} there, and its slot
 * goes to the next one: the engine drops it without the edge's help (whose timer may not have fired yet), and it never
 * reaches a replica. A request dispatched carries its deadline to the replica, whose predictors drop it the same way.
 *
 * <p>Cost. Before it takes a slot or a queue place, a request takes its estimated tokens from {@link #pending}, or is
 * refused as a full queue is ({@code max_pending_tokens}; {@link PendingTokens} says who writes and reads them).
 *
 * <p>No replica. A deployment with no routable replica refuses requests ({@link NotReady}), unless the controller
 * set {@link #queueWhileEmpty}: an autoscaled deployment at zero replicas (or starting one) queues them like full
 * replicas do, within the same bound, and the drain that follows the next {@link #publish} dispatches them. Past
 * the bound they are refused with the expected start time as their Retry-After. The autoscaler notices them by
 * sampling {@link #queuedRequests()}: nothing on this path calls out.
 *
 * <p>Threads: any thread calls {@link #submit}; completions run {@link #drain()} on predictor threads; the
 * controller thread calls {@link #publish}, {@link #refuse}, {@link #accept} and {@link #close}; a draining thread
 * can be any of them. {@link #pace} is fed by completions without coordination and read for Retry-After estimates:
 * best-effort by design.
 */
public final class Router<I, O> {

    private final String deployment;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final AtomicReference<RoutingSnapshot<I, O>> snapshot = new AtomicReference<>(RoutingSnapshot.empty());
    /** Queued requests in arrival order; may still hold requests that left (their claim is OUT) until unlinked. */
    private final ConcurrentLinkedQueue<RoutedRequest<I, O>> waiting = new ConcurrentLinkedQueue<>();
    /** Queue places taken: requests queued (or about to be) and not yet claimed; bounded by max_queued_requests. */
    private final BoundedCount queued;
    /** Estimated tokens of the requests admitted and not answered (queued or running). */
    final PendingTokens pending;
    /** Drains asked for and not yet run: the drain loop's work-in-progress counter. */
    private final AtomicInteger drainRequests = new AtomicInteger();
    private volatile boolean closed;
    /** Why no request can be served now (written by the controller thread), or null while requests may wait. */
    private volatile String refusal;
    /**
     * How long a replica is expected to take to start, while requests queue with no replica routable (an autoscaled
     * deployment at zero, or starting its first replica); 0 while such requests are refused instead. Written by the
     * controller thread ({@link #queueWhileEmpty}), read by requests: the Retry-After of a full queue at zero.
     */
    private volatile long queueWhileEmptyNanos;
    /**
     * Whether a request arrived since the autoscaler last looked ({@link #takeArrived}): set by request threads (a
     * read per request, a write only when it was clear), cleared by the autoscaler thread. Best-effort by design: an
     * arrival racing the clear is seen at the next look.
     */
    private volatile boolean arrived;
    /** The pace at which requests complete, for the Retry-After of a refusal. */
    private final RetryAfter pace;

    public Router(String deployment, int maxQueuedRequests, LongSupplier nanoTime) {
        this(deployment, maxQueuedRequests, Integer.MAX_VALUE, nanoTime, DeploymentMetrics.discarding(deployment));
    }

    /** @param metrics records queue waits and inputs per request */
    public Router(String deployment, int maxQueuedRequests, int maxPendingTokens, LongSupplier nanoTime,
            DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.queued = new BoundedCount(maxQueuedRequests);
        this.pending = new PendingTokens(deployment, maxPendingTokens);
        this.nanoTime = nanoTime;
        this.metrics = metrics;
        this.pace = RetryAfter.completionPaced(nanoTime.getAsLong());
    }

    /**
     * Sends {@code inputs} to a replica now, or queues them until one has room. Never blocks.
     *
     * @return completes with the outputs, or exceptionally with the replica's failure or {@link NotReady} if the
     *     deployment closes or is refused (see {@link #refuse}) while the request waits. A caller that cancels it or
     *     fails it (its deadline) ends it at once: it leaves the queue, or its run on the replica is cancelled.
     * @throws Overloaded when every chosen replica is full and the queue is too
     * @throws NotReady   when the deployment has no routable replica (unless it queues while empty), is refused, or
     *                    is closed
     */
    public CompletableFuture<List<O>> submit(List<I> inputs) {
        return submit(inputs, CallContext.NO_DEADLINE);
    }

    /** {@link #submit(List, long, long)} of a request that costs no tokens. */
    public CompletableFuture<List<O>> submit(List<I> inputs, long deadlineNanos) {
        return submit(inputs, deadlineNanos, 0);
    }

    /**
     * {@link #submit(List)} for a request that may run until {@code deadlineNanos} ({@link CallContext#deadlineNanos},
     * on the router's clock): once it has passed, the request is dropped wherever it waits (this queue, the replica's),
     * failed with {@link DeadlineExceeded}, never run. It holds {@code cost} tokens of {@link #pending} until it ends,
     * and is refused with {@link Overloaded} when they do not fit.
     */
    public CompletableFuture<List<O>> submit(List<I> inputs, long deadlineNanos, long cost) {
        RoutingSnapshot<I, O> current = snapshot.get();
        String refused = refusal;
        if (closed || refused != null || (current.isEmpty() && queueWhileEmptyNanos == 0)) {
            throw new NotReady(closed ? "model '" + deployment + "' is shutting down"
                    : refused != null ? refused : "model '" + deployment + "' has no running replica");
        }
        if (!arrived) {
            arrived = true;
        }
        metrics.requestInputs(inputs.size());
        int tokens = pending.tryReserve(cost);
        if (tokens < 0) {
            throw pending.refusal(cost, pace.estimate(queued.count() + current.inFlight()));
        }
        RoutableReplica<I, O> replica = current.choose();
        if (replica != null) {
            metrics.queueWait(0);
            return dispatch(replica, inputs, new RoutedRequest<>(this, deadlineNanos, tokens));
        }
        if (!queued.tryAcquire()) {
            pending.release(tokens);
            if (current.isEmpty()) {
                throw new Overloaded("model '" + deployment + "' has no replica serving yet (one is starting) and "
                        + queued.count() + " requests are queued (max-queued-requests " + queued.limit() + ")",
                        Duration.ofMillis(Math.max(RetryAfter.MIN.toMillis(), Math.min(RetryAfter.MAX.toMillis(),
                                queueWhileEmptyNanos / 1_000_000))));
            }
            throw overloaded("all " + current.size() + " replicas are at max-ongoing-requests and ", queued.count(),
                    queued.limit());
        }
        RoutedRequest<I, O> request = new RoutedRequest<>(this, inputs, nanoTime.getAsLong(), deadlineNanos, tokens);
        waiting.add(request);
        drain();
        String refusedNow = refusal;
        if (closed || refusedNow != null) {
            // A close or refusal that ran before this request queued: it would otherwise wait for nothing.
            failQueued(closed ? shutDownReason() : refusedNow);
        }
        return request;
    }

    private RoutedRequest<I, O> dispatch(RoutableReplica<I, O> replica, List<I> inputs, RoutedRequest<I, O> result) {
        CompletableFuture<List<O>> run;
        try {
            run = replica.run(inputs, result.deadlineNanos);
        } catch (RuntimeException e) {
            replica.release();
            drain();
            result.completeExceptionally(e);
            return result;
        }
        result.replica = replica;
        result.upstream = run;
        if (result.isDone()) {
            run.cancel(false); // the caller ended it (its deadline) while run() was starting: it saw no upstream
        }
        run.whenComplete(new RoutedRequest.Completion<>(this, replica, result));
        return result;
    }

    /**
     * The model version of the replica that took a request, given the future {@link #submit} returned; empty while
     * the request waits in the queue or when it never reached a replica.
     */
    public static Optional<String> servedVersion(CompletableFuture<?> result) {
        RoutableReplica<?, ?> replica = result instanceof RoutedRequest<?, ?> routed ? routed.replica : null;
        return replica == null ? Optional.empty() : Optional.of(replica.version());
    }

    /**
     * The replica that runs (or ran) a request, given the future {@link #submit} returned: its model answers it. Null
     * while the request waits in the queue, and when no replica ran it (none took it, or the one chosen refused it:
     * {@link RoutableReplica#run} threw). Set before the run can complete the future.
     */
    @SuppressWarnings("unchecked")
    public static <I, O> RoutableReplica<I, O> servedBy(CompletableFuture<List<O>> result) {
        return result instanceof RoutedRequest<?, ?> routed ? (RoutableReplica<I, O>) routed.replica : null;
    }

    /**
     * Dispatches queued requests while some replica has a free slot. Call after any change that can make room or work;
     * returns at once when another thread is draining (that thread drains once more on this call's behalf).
     */
    public void drain() {
        if (queued.count() == 0 || drainRequests.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            dispatchQueued();
            missed = drainRequests.addAndGet(-missed);
        } while (missed != 0);
    }

    /** One pass of the drain loop; the calling thread holds the drain. */
    private void dispatchQueued() {
        RoutableReplica<I, O> slot = null;
        while (queued.count() > 0) {
            if (slot == null) {
                slot = snapshot.get().anyWithCapacity();
                if (slot == null) {
                    return;
                }
            }
            RoutedRequest<I, O> next = waiting.poll();
            if (next == null) {
                break; // its submitter has a queue place but has not queued it yet: it drains after queueing
            }
            if (!next.claim()) {
                continue; // it left the queue on its own (cancelled or expired); the slot goes to the next one
            }
            queued.release();
            List<I> inputs = next.takeInputs();
            if (next.isDone()) {
                continue;
            }
            long now = nanoTime.getAsLong();
            if (CallContext.passed(next.deadlineNanos, now)) {
                next.completeExceptionally(new DeadlineExceeded("the request's deadline passed while it waited in "
                        + "the queue of model '" + deployment + "'; it was not run"));
                continue; // the slot goes to the next one
            }
            metrics.queueWait(now - next.since);
            RoutableReplica<I, O> replica = slot;
            slot = null;
            dispatch(replica, inputs, next);
        }
        if (slot != null) {
            slot.release();
        }
    }

    /**
     * Refuses now, as {@link #submit} would, when the queue is at its bound: a best-effort check (a slot may free a
     * moment later) that lets the edge refuse on a request's headers, before reading or decoding its body. Reads three
     * fields; allocates only the refusal.
     *
     * @throws Overloaded when {@code max_queued_requests} requests are queued, or {@code max_pending_tokens} held
     */
    public void refuseIfFull() {
        int limit = queued.limit();
        int now = queued.count();
        if (now >= limit) {
            throw overloaded("", now, limit);
        }
        if (pending.full()) {
            throw pending.refusal(0, pace.estimate(now + snapshot.get().inFlight()));
        }
    }

    /** The refusal for a full queue of {@code now} requests, {@code also} saying what else is full. */
    private Overloaded overloaded(String also, int now, int limit) {
        return new Overloaded("model '" + deployment + "' is overloaded: " + also + now + " requests are queued "
                + "(max-queued-requests " + limit + ")", pace.estimate(now));
    }

    /**
     * Whether a request arrived since the previous call (the autoscaler's: a request shorter than its sampling period
     * is in no sample of the ongoing count, yet a deployment that gets requests must not look idle).
     */
    public boolean takeArrived() {
        if (!arrived) {
            return false;
        }
        arrived = false;
        return true;
    }

    /** Requests waiting for a free slot. */
    public int queuedRequests() {
        return queued.count();
    }

    /** The estimated tokens of the requests admitted and not answered, and their bound ({@code max_pending_tokens}). */
    public PendingTokens pendingTokens() {
        return pending;
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
        queued.limit(limit);
    }

    /** Refuses new requests and fails queued ones with {@link NotReady}. Requests already on replicas finish. */
    public void close() {
        closed = true;
        failQueued(shutDownReason());
    }

    /**
     * Controller thread: refuses new requests with {@link NotReady} carrying {@code reason} and fails every queued one
     * with it, until {@link #accept()}: for a deployment that has no replica and none starting (its starts failed, or
     * it is scaled to zero), where waiting would never end. A request that queues while this runs fails itself.
     */
    public void refuse(String reason) {
        refusal = reason;
        failQueued(reason);
    }

    /**
     * Controller thread: from now on a request that finds no routable replica waits in the queue (within its bound)
     * for one to start, instead of being refused: for an autoscaled deployment that may be at zero replicas.
     *
     * @param expectedStartNanos how long a replica is expected to take to start (the Retry-After of a refusal while
     *                           none serves); at least 1
     */
    public void queueWhileEmpty(long expectedStartNanos) {
        queueWhileEmptyNanos = Math.max(1, expectedStartNanos);
    }

    /** Controller thread: a request that finds no routable replica is refused again ({@link NotReady}). */
    public void refuseWhileEmpty() {
        queueWhileEmptyNanos = 0;
    }

    /** Whether a request that finds no routable replica waits for one ({@link #queueWhileEmpty}). */
    public boolean queuesWhileEmpty() {
        return queueWhileEmptyNanos != 0;
    }

    /** Controller thread: takes requests again after {@link #refuse}. */
    public void accept() {
        refusal = null;
    }

    /** Fails every queued request with {@link NotReady} carrying {@code reason}; new requests are still taken. */
    public void failQueued(String reason) {
        RoutedRequest<I, O> next;
        while ((next = waiting.poll()) != null) {
            if (next.claim()) {
                queued.release();
                next.takeInputs();
                next.completeExceptionally(new NotReady(reason));
            }
        }
    }

    private String shutDownReason() {
        return "model '" + deployment + "' shut down before serving this request";
    }

    /** A request that left the queue on its own (its caller ended it): give back its place and forget it. */
    void left(RoutedRequest<I, O> request) {
        queued.release();
        waiting.remove(request);
    }

    /** A request's run on a replica completed: it feeds the pace of {@link #pace}. */
    void completed() {
        pace.completedAt(nanoTime.getAsLong());
    }
}
