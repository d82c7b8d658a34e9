package dev.serval.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import dev.serval.admission.BoundedCount;

/**
 * A routable replica for tests: counts its slots, and either answers at once with its own id or, when held, keeps
 * each run pending until the test calls {@link #finishNext}. {@link #beforeRelease} and {@link #beforeRun} run on the
 * calling thread first: tests park a thread there (on a latch) to force one interleaving.
 */
public final class TestReplica implements RoutableReplica<String, String> {

    public final long id;
    public final BoundedCount slots;
    private final boolean held;
    private final List<CompletableFuture<List<String>>> runs = new ArrayList<>();
    /** Runs on the releasing thread before a slot is given back. */
    public volatile Runnable beforeRelease = () -> { };
    /** Runs on the dispatching thread before a run is accepted. */
    public volatile Runnable beforeRun = () -> { };

    private TestReplica(long id, int max, boolean held) {
        this.id = id;
        this.slots = new BoundedCount(max);
        this.held = held;
    }

    /** Answers every run at once with {@code replica-<id>}. */
    public static TestReplica answering(long id, int max) {
        return new TestReplica(id, max, false);
    }

    /** Keeps every run pending until {@link #finishNext}. */
    public static TestReplica held(long id, int max) {
        return new TestReplica(id, max, true);
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public int inFlight() {
        return slots.count();
    }

    @Override
    public boolean tryAcquire() {
        return slots.tryAcquire();
    }

    @Override
    public void release() {
        beforeRelease.run();
        slots.release();
    }

    @Override
    public CompletableFuture<List<String>> run(List<String> inputs, long deadlineNanos) {
        beforeRun.run();
        if (!held) {
            return CompletableFuture.completedFuture(List.of("replica-" + id));
        }
        CompletableFuture<List<String>> run = new CompletableFuture<>();
        synchronized (this) {
            runs.add(run);
        }
        return run;
    }

    public synchronized int pendingRuns() {
        return runs.size();
    }

    /** Completes the oldest pending run with {@code answer}, outside the replica's lock (as a predictor thread would). */
    public void finishNext(String answer) {
        CompletableFuture<List<String>> run;
        synchronized (this) {
            run = runs.removeFirst();
        }
        run.complete(List.of(answer));
    }

    /** Completes the oldest pending run, if there is one, with its input count; false when none is pending. */
    public boolean tryFinishNext() {
        CompletableFuture<List<String>> run;
        synchronized (this) {
            if (runs.isEmpty()) {
                return false;
            }
            run = runs.removeFirst();
        }
        run.complete(List.of("replica-" + id));
        return true;
    }

    /** The runs still pending, in order (the router cancels those whose caller went away). */
    public synchronized List<CompletableFuture<List<String>>> pending() {
        return List.copyOf(runs);
    }
}
