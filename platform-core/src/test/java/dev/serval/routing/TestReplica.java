package dev.serval.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import dev.serval.admission.Slots;

/**
 * A routable replica for tests: counts its slots, and either answers at once with its own id or, when held, keeps
 * each run pending until the test calls {@link #finishNext}.
 */
public final class TestReplica implements RoutableReplica<String, String> {

    public final long id;
    public final Slots slots;
    private final boolean held;
    private final List<CompletableFuture<List<String>>> runs = new ArrayList<>();

    private TestReplica(long id, int max, boolean held) {
        this.id = id;
        this.slots = new Slots(max);
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
        return slots.used();
    }

    @Override
    public boolean tryAcquire() {
        return slots.tryAcquire();
    }

    @Override
    public void release() {
        slots.release();
    }

    @Override
    public synchronized CompletableFuture<List<String>> run(List<String> inputs) {
        if (!held) {
            return CompletableFuture.completedFuture(List.of("replica-" + id));
        }
        CompletableFuture<List<String>> run = new CompletableFuture<>();
        runs.add(run);
        return run;
    }

    public synchronized int pendingRuns() {
        return runs.size();
    }

    public synchronized void finishNext(String answer) {
        runs.removeFirst().complete(List.of(answer));
    }
}
