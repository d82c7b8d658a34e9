package dev.serval.deployment;

import dev.serval.spec.DeploymentStatus;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The last {@value #CAPACITY} replica failures of one deployment, oldest first, taken from the statuses the
 * controller publishes.
 *
 * <p>Threads: the controller thread records (once per published status); status readers (HTTP threads) list. Both
 * hold the ring's monitor, briefly; neither is on the request path.
 */
final class RecentErrors {

    static final int CAPACITY = 10;

    private final InstantSource wallClock;
    /** Guarded by itself. */
    private final ArrayDeque<RecentError> ring = new ArrayDeque<>(CAPACITY);

    RecentErrors(InstantSource wallClock) {
        this.wallClock = wallClock;
    }

    /**
     * Records {@code next}'s error when it is news: a different message than {@code previous}'s, or the same message
     * from one more failed start. Drops the oldest error when full.
     */
    void record(DeploymentStatus previous, DeploymentStatus next) {
        String error = next.lastError();
        if (error == null || error.equals(previous.lastError()) && next.failedStarts() <= previous.failedStarts()) {
            return;
        }
        synchronized (ring) {
            if (ring.size() == CAPACITY) {
                ring.removeFirst();
            }
            ring.addLast(new RecentError(wallClock.instant(), error));
        }
    }

    /** A copy of the ring, oldest first. */
    List<RecentError> list() {
        synchronized (ring) {
            return List.copyOf(ring);
        }
    }
}
