package dev.serval.admission;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A bounded count of admitted work: {@code max_ongoing_requests} for a replica. Lock-free: taking a slot is a CAS
 * loop that never blocks and allocates nothing; any thread may take and give back slots.
 */
public final class Slots {

    private final AtomicInteger used = new AtomicInteger();
    private final int capacity;

    public Slots(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
        }
        this.capacity = capacity;
    }

    /** Takes a slot if one is free. */
    public boolean tryAcquire() {
        for (;;) {
            int now = used.get();
            if (now >= capacity) {
                return false;
            }
            if (used.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /**
     * Gives back a slot taken with {@link #tryAcquire()}.
     *
     * @return the slots still taken
     * @throws IllegalStateException when more slots are given back than were taken (a caller bug)
     */
    public int release() {
        int left = used.decrementAndGet();
        if (left < 0) {
            used.incrementAndGet();
            throw new IllegalStateException("released a slot that was not taken");
        }
        return left;
    }

    /** Slots taken now. */
    public int used() {
        return used.get();
    }

    public int capacity() {
        return capacity;
    }
}
