package dev.serval.api.http;

import java.util.concurrent.Semaphore;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What the dashboard's data ({@code GET /ui/api/dashboard}) may cost the server, whoever asks and however often: at
 * most {@link #MAX_COMPUTING} answers are computed at once (on worker threads; a request beyond them is refused at
 * once, 503 + Retry-After, instead of taking another worker or waiting), and the whole feed, the expensive answer
 * (every deployment's full history), is computed at most once per sample interval and its bytes shared by every
 * request in that interval: reloading pages, or a client polling without {@code after}, cost one computation per
 * interval.
 *
 * <p>Threads: any worker thread. {@link #whole} is one volatile reference to an immutable pair, replaced whole;
 * two workers that find it stale at the same moment may both compute it (best-effort by design: the bound on
 * computations is the semaphore's, not the cache's).
 */
final class FeedCost {

    /** Feed answers computed at once; more are refused. */
    static final int MAX_COMPUTING = 2;

    private record Computed(byte[] bytes, long atNanos) {
    }

    private final Semaphore computing = new Semaphore(MAX_COMPUTING);
    private final long reuseNanos;
    private final LongSupplier nanoTime;
    private volatile Computed whole;

    /** @param reuseNanos how long a whole feed is served as computed (the sampler's interval) */
    FeedCost(long reuseNanos, LongSupplier nanoTime) {
        this.reuseNanos = reuseNanos;
        this.nanoTime = nanoTime;
    }

    /** Takes one of the places to compute an answer; false when all are taken (refuse the request). */
    boolean tryEnter() {
        return computing.tryAcquire();
    }

    /** Gives back a place taken with {@link #tryEnter}. */
    void exit() {
        computing.release();
    }

    /** The whole feed: as computed less than an interval ago, or {@code compute}d now. Call between enter and exit. */
    byte[] whole(Supplier<byte[]> compute) {
        long now = nanoTime.getAsLong();
        Computed last = whole;
        if (last != null && now - last.atNanos() < reuseNanos) {
            return last.bytes();
        }
        byte[] bytes = compute.get();
        whole = new Computed(bytes, now);
        return bytes;
    }
}
