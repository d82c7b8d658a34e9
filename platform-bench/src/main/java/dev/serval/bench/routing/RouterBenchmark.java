package dev.serval.bench.routing;

import dev.serval.bench.BenchmarkBase;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Time to pick a replica for one request: {@link RoutingSnapshot#choose()} (power of two choices, a CAS on the
 * chosen replica's in-flight count) followed by {@link RoutableReplica#release()} of the slot it took, against
 * 1 to 1000 replicas.
 *
 * <ul>
 *   <li>{@link #choose}: the router's selection on the request thread, with nothing else running.</li>
 *   <li>{@link #naiveLockedMinScan}, the baseline: the design Serval replaced (SGLang's router had it): replicas
 *       in an {@link ArrayList} behind a lock; each selection takes the lock, copies the candidates into a new
 *       list and scans it for the fewest requests in flight. It allocates a list per request, is O(n) in the
 *       replicas, and serialises every request thread on one monitor. (Sorting the copy instead of scanning it
 *       would only be slower.)</li>
 *   <li>Group {@code swapping}: the same selection ({@link #chooseWhileSwapping}) on one thread while a second
 *       thread ({@link #publishWhileSelecting}) republishes the snapshot through {@link Router#publish} in a
 *       tight loop, alternating between two prebuilt snapshots of the same replicas. Real controllers publish
 *       rarely (only when the routable set changes); this is the worst case for the selecting thread, whose
 *       read of the snapshot reference now misses in cache almost every time. The publisher's alternation is
 *       kept in its own thread-scoped state so that the harness adds no false sharing of its own.</li>
 *   <li>Group {@code naiveSwapping}: the baseline under the same load: one thread selecting, one thread
 *       replacing the list's contents under the lock, as a router whose membership changes would.</li>
 * </ul>
 *
 * <p>Why: selection runs once per request on the request thread (an event loop), so it must cost a few tens of
 * nanoseconds however many replicas there are, take no lock and allocate nothing. Goals from the issue:
 * at most 20 ns at 2 to 10 replicas, 40 ns at 100, and 0 B/op, which {@code -prof gc} shows as
 * {@code gc.alloc.rate.norm} ~0.
 *
 * <p>The replicas are fakes: an {@link AtomicInteger} in-flight count with a maximum that is never reached,
 * so selection never fails and each operation is exactly one acquire and one release. Every benchmark but the
 * group ones runs on one thread; in-flight counts are then 0 at each selection, which favours neither design
 * (both read the counts; the baseline reads all of them).
 *
 * <p>Run from the repository root (about 3 minutes with these settings; the class's defaults take longer):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar RouterBenchmark -f 1 -wi 2 -i 3 -w 2s -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RouterBenchmark extends BenchmarkBase {

    /** Selection as the router does it: one snapshot read, two random replicas, one CAS. */
    @Benchmark
    public RoutableReplica<String, String> choose(Replicas replicas) {
        RoutableReplica<String, String> chosen = replicas.snapshot.choose();
        chosen.release();
        return chosen;
    }

    /** Baseline: lock, copy the candidates, scan for the least loaded. */
    @Benchmark
    public RoutableReplica<String, String> naiveLockedMinScan(Replicas replicas) {
        RoutableReplica<String, String> chosen = replicas.naive.choose();
        chosen.release();
        return chosen;
    }

    /** Selection while another thread keeps publishing new snapshots. */
    @Benchmark
    @Group("swapping")
    @GroupThreads(1)
    public RoutableReplica<String, String> chooseWhileSwapping(Swapping swapping) {
        RoutableReplica<String, String> chosen = swapping.router.snapshot().choose();
        chosen.release();
        return chosen;
    }

    /** The controller side of {@code swapping}, in a loop: one publish per operation. */
    @Benchmark
    @Group("swapping")
    @GroupThreads(1)
    public void publishWhileSelecting(Swapping swapping, Flip flip) {
        swapping.router.publish(flip.next() ? swapping.reversed : swapping.forward);
    }

    /** Baseline selection while another thread keeps replacing the replica list under the lock. */
    @Benchmark
    @Group("naiveSwapping")
    @GroupThreads(1)
    public RoutableReplica<String, String> naiveChooseWhileSwapping(NaiveSwapping swapping) {
        RoutableReplica<String, String> chosen = swapping.router.choose();
        chosen.release();
        return chosen;
    }

    /** The membership side of {@code naiveSwapping}: one replacement of the list per operation. */
    @Benchmark
    @Group("naiveSwapping")
    @GroupThreads(1)
    public void naiveReplaceWhileSelecting(NaiveSwapping swapping, Flip flip) {
        swapping.router.replaceAll(flip.next() ? swapping.reversed : swapping.forward);
    }

    /** The replicas, as the router's snapshot and as the baseline's locked list; one set per thread. */
    @State(Scope.Thread)
    public static class Replicas {

        @Param({"1", "2", "10", "100", "1000"})
        public int replicas;

        RoutingSnapshot<String, String> snapshot;
        NaiveRouter naive;

        @Setup(Level.Trial)
        public void build() {
            List<FakeReplica> all = fakeReplicas(replicas);
            snapshot = RoutingSnapshot.of(all);
            naive = new NaiveRouter(all);
        }
    }

    /**
     * One {@link Router} shared by the selecting and the publishing thread, and the two snapshots it alternates.
     * Read-only after set-up: the publisher's alternation lives in its own {@link Flip}, so that the only cache
     * line both threads write or read-while-written is the router's own snapshot reference.
     */
    @State(Scope.Group)
    public static class Swapping {

        @Param({"1", "2", "10", "100", "1000"})
        public int replicas;

        Router<String, String> router;
        RoutingSnapshot<String, String> forward;
        RoutingSnapshot<String, String> reversed;

        @Setup(Level.Trial)
        public void build() {
            List<FakeReplica> all = fakeReplicas(replicas);
            forward = RoutingSnapshot.of(all);
            reversed = RoutingSnapshot.of(all.reversed());
            router = new Router<>("bench", 0, System::nanoTime);
            router.publish(forward);
        }
    }

    /** The baseline router shared by its selecting and replacing thread, and the two lists it alternates. */
    @State(Scope.Group)
    public static class NaiveSwapping {

        @Param({"1", "2", "10", "100", "1000"})
        public int replicas;

        NaiveRouter router;
        List<FakeReplica> forward;
        List<FakeReplica> reversed;

        @Setup(Level.Trial)
        public void build() {
            forward = fakeReplicas(replicas);
            reversed = forward.reversed();
            router = new NaiveRouter(forward);
        }
    }

    /** The publishing thread's alternation between two snapshots (or lists); its own state, padded by JMH. */
    @State(Scope.Thread)
    public static class Flip {

        private boolean flip;

        boolean next() {
            flip = !flip;
            return flip;
        }
    }

    static List<FakeReplica> fakeReplicas(int count) {
        List<FakeReplica> replicas = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            replicas.add(new FakeReplica(i));
        }
        return replicas;
    }

    /**
     * The baseline: a least-loaded router over a list guarded by its monitor. Every selection locks, copies the
     * replicas that still have room into a new list, and scans the copy for the fewest requests in flight.
     */
    static final class NaiveRouter {

        private final List<FakeReplica> replicas = new ArrayList<>();

        NaiveRouter(List<FakeReplica> initial) {
            replicas.addAll(initial);
        }

        synchronized RoutableReplica<String, String> choose() {
            List<FakeReplica> candidates = new ArrayList<>(replicas.size());
            for (FakeReplica replica : replicas) {
                if (replica.inFlight() < replica.maxOngoing) {
                    candidates.add(replica);
                }
            }
            FakeReplica best = null;
            for (FakeReplica candidate : candidates) {
                if (best == null || candidate.inFlight() < best.inFlight()) {
                    best = candidate;
                }
            }
            return best != null && best.tryAcquire() ? best : null;
        }

        synchronized void replaceAll(List<FakeReplica> next) {
            replicas.clear();
            replicas.addAll(next);
        }
    }

    /** A replica that does no work: an in-flight count taken by CAS, with a limit that is never reached. */
    static final class FakeReplica implements RoutableReplica<String, String> {

        private final long id;
        private final int maxOngoing = Integer.MAX_VALUE / 2;
        private final AtomicInteger inFlight = new AtomicInteger();

        FakeReplica(long id) {
            this.id = id;
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
                if (now >= maxOngoing) {
                    return false;
                }
                if (inFlight.compareAndSet(now, now + 1)) {
                    return true;
                }
            }
        }

        @Override
        public void release() {
            inFlight.decrementAndGet();
        }

        @Override
        public CompletableFuture<List<String>> run(List<String> inputs, long deadlineNanos) {
            throw new UnsupportedOperationException("the benchmark only selects");
        }
    }
}
