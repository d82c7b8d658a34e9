package dev.serval.admission;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A count that never goes above its limit: the one admission primitive of the engine. A replica's requests in flight
 * ({@code max_ongoing_requests}), the deployment's queued requests ({@code max_queued_requests}) and a replica's
 * queued inputs ({@code max_ongoing_requests x max_inputs_per_request}) are each one of these.
 *
 * <p>Design. {@link #tryAcquire(int)} is a CAS loop on one {@link AtomicInteger}: it takes all {@code n} places or
 * none, never blocks, never locks and allocates nothing; {@link #release(int)} is one atomic add. Any thread may
 * acquire and release. The limit is volatile and may change at run time ({@link #limit(int)}): places already taken
 * stay taken, and a lowered limit only refuses new acquisitions until the count is below it again. Reads of
 * {@link #count()} and {@link #full()} are plain volatile reads, best-effort by design: the count may change the next
 * instant, so they suit gauges, refusals on headers and choosing between replicas, never admission itself.
 */
public final class BoundedCount {

    private final AtomicInteger count = new AtomicInteger();
    private volatile int limit;

    /** @param limit places that may be taken at once, at least 0 (0: every acquisition is refused) */
    public BoundedCount(int limit) {
        this.limit = requireLimit(limit);
    }

    private static int requireLimit(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be >= 0, was " + limit);
        }
        return limit;
    }

    /** Takes one place if one is free. */
    public boolean tryAcquire() {
        return tryAcquire(1);
    }

    /**
     * Takes {@code n} places if all of them are free, else none: the count never exceeds the limit, also under
     * contention. Computed in {@code long}, so a count near {@link Integer#MAX_VALUE} cannot wrap.
     */
    public boolean tryAcquire(int n) {
        for (;;) {
            int now = count.get();
            if ((long) now + n > limit) {
                return false;
            }
            if (count.compareAndSet(now, now + n)) {
                return true;
            }
        }
    }

    /** Gives back one place; see {@link #release(int)}. */
    public int release() {
        return release(1);
    }

    /**
     * Gives back {@code n} places taken with {@link #tryAcquire(int)}.
     *
     * @return the places still taken
     * @throws IllegalStateException when more places are given back than were taken (a caller bug); the count is
     *                               left as it was
     */
    public int release(int n) {
        int left = count.addAndGet(-n);
        if (left < 0) {
            count.addAndGet(n);
            throw new IllegalStateException("released " + n + " places, " + (left + n) + " were taken");
        }
        return left;
    }

    /** Places taken now. */
    public int count() {
        return count.get();
    }

    /** Whether no place is free now (best-effort: see the design comment). */
    public boolean full() {
        return count.get() >= limit;
    }

    public int limit() {
        return limit;
    }

    /** Changes the limit; places already taken stay taken. */
    public void limit(int limit) {
        this.limit = requireLimit(limit);
    }
}
