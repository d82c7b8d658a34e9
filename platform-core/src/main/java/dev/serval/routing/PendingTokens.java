package dev.serval.routing;

import dev.serval.admission.BoundedCount;
import dev.serval.error.Overloaded;
import java.time.Duration;

/**
 * A deployment's {@code max_pending_tokens}: the estimated tokens (the model's {@code admissionCost}) of every request
 * its {@link Router} admitted and has not answered, queued or on a replica. Requests are counted in requests by slots
 * and the queue; a request of many long texts costs far more, and this counts that.
 *
 * <p>Design. One {@link BoundedCount} of the limit. A request takes {@code min(cost, limit)} by CAS
 * ({@link #tryReserve}) before it takes a slot or a queue place, so one request larger than the limit is admitted only
 * when nothing else is pending; when it does not fit, the router refuses it with {@link #refusal} ({@link Overloaded},
 * paced as a full queue). The request ({@link RoutedRequest}) holds what it took and gives it back exactly once (a
 * getAndSet to 0 on its own field): on the thread that completes its run, before its caller sees the answer (so that
 * the caller's next request finds the tokens back), or on the thread that ends it otherwise (cancelled, failed by its
 * deadline or by the replica, failed with the queue); a request refused for a full queue gives it back before the
 * refusal. Request threads and predictor threads write the count; gauges and the refusal on a request's headers read
 * it (best-effort, as {@link BoundedCount#count} says). A request that costs 0 (a model that reads no tokens) never
 * touches it. The limit changes in place ({@link #limit(int)}, controller thread); tokens taken stay taken, and each
 * request gives back what it took.
 */
public final class PendingTokens {

    private final String deployment;
    private final BoundedCount count;

    PendingTokens(String deployment, int limit) {
        this.deployment = deployment;
        this.count = new BoundedCount(limit);
    }

    /**
     * Takes {@code cost} tokens, at most the limit: the tokens taken (0 for a cost of 0 or less), or -1 when they do
     * not fit now. Lock-free, allocation-free.
     */
    int tryReserve(long cost) {
        if (cost <= 0) {
            return 0;
        }
        int tokens = (int) Math.min(cost, count.limit());
        return count.tryAcquire(tokens) ? tokens : -1;
    }

    /** Gives back {@code tokens} taken by {@link #tryReserve}; once per reservation. */
    void release(int tokens) {
        if (tokens > 0) {
            count.release(tokens);
        }
    }

    /** Whether no request that costs anything fits now (best-effort: a refusal on the headers). */
    boolean full() {
        return count.full();
    }

    /** The refusal of a request estimated at {@code cost} tokens (0: not known yet) that did not fit. */
    Overloaded refusal(long cost, Duration retryAfter) {
        return new Overloaded("model '" + deployment + "' is overloaded: its admitted requests hold an estimated "
                + count.count() + " tokens" + (cost > 0 ? " and this one is estimated at " + cost : "")
                + " (max_pending_tokens " + count.limit() + ")", retryAfter);
    }

    /** The estimated tokens of the requests admitted and not answered, now. */
    public int count() {
        return count.count();
    }

    public int limit() {
        return count.limit();
    }

    /** Controller thread: changes {@code max_pending_tokens}; tokens already taken stay taken. */
    public void limit(int limit) {
        count.limit(limit);
    }
}
