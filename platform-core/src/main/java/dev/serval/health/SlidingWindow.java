package dev.serval.health;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Counts successes and server failures over the last {@code buckets × bucketNanos}, in time buckets reused
 * round-robin. Any thread records (an index computation and an atomic add); the monitor thread reads.
 *
 * <p>Best-effort by design: when a bucket is reused, the recorder that claims it (by CAS on its epoch) zeroes its
 * counts, and an increment racing with that reset may be lost. A failure-ratio alarm does not need exact counts.
 */
final class SlidingWindow {

    private final LongSupplier nanoTime;
    private final long bucketNanos;
    private final int buckets;
    private final AtomicLongArray epochs;
    private final AtomicLongArray ok;
    private final AtomicLongArray failed;

    SlidingWindow(LongSupplier nanoTime, long windowNanos, int buckets) {
        this.nanoTime = nanoTime;
        this.buckets = buckets;
        this.bucketNanos = Math.max(1, windowNanos / buckets);
        this.epochs = new AtomicLongArray(buckets);
        this.ok = new AtomicLongArray(buckets);
        this.failed = new AtomicLongArray(buckets);
        for (int i = 0; i < buckets; i++) {
            epochs.set(i, Long.MIN_VALUE);
        }
    }

    void record(boolean serverFailure) {
        long epoch = Math.floorDiv(nanoTime.getAsLong(), bucketNanos);
        int i = (int) Math.floorMod(epoch, (long) buckets);
        long seen = epochs.get(i);
        if (seen != epoch && epochs.compareAndSet(i, seen, epoch)) {
            ok.set(i, 0);
            failed.set(i, 0);
        }
        (serverFailure ? failed : ok).incrementAndGet(i);
    }

    /** {successes, failures} over the window ending now. */
    long[] totals() {
        long current = Math.floorDiv(nanoTime.getAsLong(), bucketNanos);
        long good = 0;
        long bad = 0;
        for (int i = 0; i < buckets; i++) {
            long epoch = epochs.get(i);
            if (epoch != Long.MIN_VALUE && epoch > current - buckets && epoch <= current) {
                good += ok.get(i);
                bad += failed.get(i);
            }
        }
        return new long[] {good, bad};
    }

    /** Forgets everything (after the monitor acted on it). */
    void clear() {
        for (int i = 0; i < buckets; i++) {
            epochs.set(i, Long.MIN_VALUE);
            ok.set(i, 0);
            failed.set(i, 0);
        }
    }
}
