package dev.serval.controller;

import dev.serval.routing.RoutableReplica;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/** A replica that answers at once with its own id; counts slots. */
final class FakeReplica implements RoutableReplica<String, String> {

    final long id;
    final AtomicInteger inFlight = new AtomicInteger();
    final int max;

    FakeReplica(long id, int max) {
        this.id = id;
        this.max = max;
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }

    @Override
    public boolean tryAcquire() {
        for (;;) {
            int now = inFlight.get();
            if (now >= max) {
                return false;
            }
            if (inFlight.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    @Override
    public void release() {
        if (inFlight.decrementAndGet() < 0) {
            throw new AssertionError("replica " + id + " released more slots than it gave");
        }
    }

    @Override
    public CompletableFuture<List<String>> run(List<String> inputs) {
        return CompletableFuture.completedFuture(List.of("replica-" + id));
    }
}
