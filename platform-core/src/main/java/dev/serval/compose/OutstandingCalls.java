package dev.serval.compose;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The calls to other deployments that one composite model (a pipeline version, a handler instance) has started and
 * that have not ended: while there are any, its predictor threads may be waiting on them, which is not a hang (each
 * call ends at its caller's deadline at the latest), so health checks do not count such waits as failures.
 *
 * <p>Threads: {@link Handle}s increment it on the calling thread and decrement it on the thread that ends the call;
 * the health-check thread reads it. One atomic counter.
 */
public final class OutstandingCalls {

    private final AtomicInteger count = new AtomicInteger();

    void started() {
        count.incrementAndGet();
    }

    void ended() {
        count.decrementAndGet();
    }

    /** Whether a call has started and not ended, now. */
    public boolean any() {
        return count.get() > 0;
    }
}
