package dev.serval.bench.controller;

import com.sun.management.ThreadMXBean;
import dev.serval.bench.BenchmarkBase;
import dev.serval.controller.Controller;
import dev.serval.controller.ReplicaEvents;
import dev.serval.controller.ReplicaLauncher;
import dev.serval.replica.ReplicaRecord;
import dev.serval.replica.ReplicaState;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Logger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * What the controller costs per {@link Controller#tick()} and per replica event, with N replicas RUNNING
 * (N = 16, 256, 1024, 4096), fake launchers and fake replicas, so that only the controller's own bookkeeping
 * is timed: reconciliation, the replica records, routing snapshots and status.
 *
 * <ul>
 *   <li>{@link #noChangeTick}: a tick when nothing changed, which is what the controller loop does every tick
 *       period and after every task. Goal from the issue: at most 0.2 ms at 4096 replicas and 0 B/op
 *       ({@code -prof gc}); by design it reads two fields per deployment, so tens of nanoseconds.</li>
 *   <li>{@link #naiveNoChangeTick}, the baseline: Ray Serve's behaviour, where every tick rebuilds the replica
 *       list and a new record object for every replica (then counts the running ones against the target), so
 *       a tick with nothing to do costs O(N) time and allocation.</li>
 *   <li>{@link #replaceFailedReplica}: one state transition and its repair, a cycle that returns to the same
 *       state so it can be repeated without per-invocation set-up: the oldest replica reports a failure (it
 *       leaves the routing snapshot and is stopped), a tick starts its replacement, the replacement reports
 *       started (it joins the snapshot), the failed one reports stopped, and a last tick finds nothing to do.
 *       The snapshot is rebuilt twice per cycle, so expect O(N).</li>
 *   <li>{@link #stopTwo} and {@link #stopTenPercent}: scale down by k = 2 and k = ceil(N / 10) replicas
 *       ({@code apply} of the spec with fewer replicas, a tick, then the k {@code replicaStopped} reports). Every
 *       invocation starts from N RUNNING replicas: {@code @Setup(Level.Invocation)}, untimed, scales the
 *       controller back up (original spec, a tick, k {@code replicaStarted} reports, a tick). Comparing the two
 *       at each N shows how a scale-down scales with k and with N.</li>
 * </ul>
 *
 * <p>Why: the controller is one thread serving every deployment; a tick that costs O(replicas) when nothing
 * happens, or a scale-down that rewrites every record, is the Ray Serve controller bottleneck Serval's design
 * avoids (see {@link Controller}'s design comment). This benchmark checks that claim and puts numbers on it.
 *
 * <p>Details that matter for reading the numbers:
 * <ul>
 *   <li>{@link DeploymentSpec} allows at most 1024 replicas per deployment, so N = 4096 is four deployments of
 *       1024. A no-change tick then checks four deployments, a transition happens in one of them (so it costs
 *       what it costs at 1024), and a scale-down spreads its k replicas as evenly as it can over the four
 *       (stop-2 takes one from each of two).</li>
 *   <li>Where a scale-down's time goes, read from the code and a profile: each deployment it touches
 *       rebuilds its routing snapshot once (O(replicas of that deployment), walking a {@code LinkedHashMap}),
 *       and each {@code replicaStopped} report recounts the deployment's leaving replicas for the new status
 *       (O(k) each, so O(k&sup2;) for all k).</li>
 *   <li>Replica reports are delivered by calling {@link Controller#replicaStarted} and friends on the
 *       benchmark thread, as the controller thread would run them; the events executor is
 *       {@code Runnable::run}. The clock is {@link System#nanoTime}, as in production.</li>
 *   <li>The controller logs a WARNING per failed replica; its {@code java.util.logging} logger is switched off
 *       here so that the benchmark measures the controller, not the console. The log call's arguments are
 *       still built.</li>
 *   <li>The scale-down benchmarks reuse one controller rather than building a fresh one per invocation. A fresh
 *       controller measures a cold one instead: its objects lie scattered among the megabytes of garbage its
 *       construction leaves (every {@code replicaStarted} publishes a snapshot), or, after a {@code System.gc()}
 *       to compact them, every cache is cold. In trials here, stopping 2 of 4096 took 290 us on a fresh
 *       controller against 50 us on a reused one, and stopping 2 of 16 right after a compacting GC 42 us
 *       against 0.3 us.</li>
 *   <li>The scale-downs are timed in {@code SampleTime} mode: each invocation is timed on its own, and the
 *       median ({@code p0.50}) is the figure to read. The mean also counts the young collections that the
 *       untimed scale-up's garbage triggers and that happen to fall inside a timed invocation.</li>
 *   <li>{@code -prof gc} divides all allocation during an iteration by the operations, including what the
 *       per-invocation scale-up of the scale-down benchmarks allocates, so for those two its figure is not the
 *       scale-down's. They print their own: the bytes allocated by the benchmark thread inside the timed
 *       method, averaged over the measurement iterations ({@code ThreadMXBean.getCurrentThreadAllocatedBytes},
 *       read at the end of set-up and the start of tear-down).</li>
 * </ul>
 *
 * <p>Run from the repository root (about 5 minutes with these settings):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar ControllerTickBenchmark -f 1 -wi 2 -i 3 -w 2s -r 2s -prof gc
 * }</pre>
 */
@BenchmarkMode(Mode.AverageTime)
public class ControllerTickBenchmark extends BenchmarkBase {

    /** The most replicas {@link DeploymentSpec} allows one deployment; larger N is split over several. */
    static final int MAX_PER_DEPLOYMENT = 1024;

    /** A tick with nothing to do. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public void noChangeTick(Steady steady) {
        steady.fleet.controller.tick();
    }

    /** Baseline: a tick that rebuilds every replica's record, as Ray Serve's controller does. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int naiveNoChangeTick(NaiveSteady steady) {
        return steady.controller.tick();
    }

    /** Fail the oldest replica, start and route its replacement, stop the failed one; back to N RUNNING. */
    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void replaceFailedReplica(Transition transition) {
        Fleet.Member member = transition.fleet.members[0];
        Controller controller = transition.fleet.controller;
        long failed = transition.oldest++;
        member.launcher.events.failed(failed, "benchmark: replica failed");
        controller.tick();
        long replacement = member.launcher.started.last();
        member.launcher.events.started(replacement, member.replica(replacement));
        member.launcher.events.stopped(failed);
        controller.tick();
        member.launcher.clear();
    }

    /** Scale down by 2: apply, tick, then the 2 stopped reports. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void stopTwo(StopTwo scaleDown) {
        scaleDown.run();
    }

    /** Scale down by ceil(N / 10): apply, tick, then the stopped reports. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void stopTenPercent(StopTenPercent scaleDown) {
        scaleDown.run();
    }

    /** N RUNNING replicas and nothing to do. */
    @State(Scope.Thread)
    public static class Steady {

        @Param({"16", "256", "1024", "4096"})
        public int replicas;

        Fleet fleet;

        @Setup(Level.Trial)
        public void build() {
            fleet = new Fleet(replicas);
        }

        @TearDown(Level.Trial)
        public void check() {
            fleet.requireSteady(replicas);
        }
    }

    /** The baseline's N RUNNING records. */
    @State(Scope.Thread)
    public static class NaiveSteady {

        @Param({"16", "256", "1024", "4096"})
        public int replicas;

        NaiveController controller;

        @Setup(Level.Trial)
        public void build() {
            controller = new NaiveController(replicas);
        }
    }

    /** N RUNNING replicas; in the first deployment, ids {@code [oldest, oldest + size)} are the running ones. */
    @State(Scope.Thread)
    public static class Transition {

        @Param({"16", "256", "1024", "4096"})
        public int replicas;

        Fleet fleet;
        long oldest;

        @Setup(Level.Trial)
        public void build() {
            fleet = new Fleet(replicas);
            oldest = 0;
        }

        @TearDown(Level.Trial)
        public void check() {
            fleet.requireSteady(replicas);
        }
    }

    /**
     * N RUNNING replicas before every invocation, scaled down by {@link #stopCount()} in the timed method and
     * scaled back up (untimed) in {@code @Setup(Level.Invocation)}; measures the timed method's allocation itself
     * (see the class comment).
     */
    @State(Scope.Thread)
    public abstract static class ScaleDown {

        private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

        @Param({"16", "256", "1024", "4096"})
        public int replicas;

        private Fleet fleet;
        /** Per deployment: the spec with its share of the k replicas removed, or null when its share is 0. */
        private DeploymentSpec[] smaller;
        private boolean scaledDown;
        private int stopped;
        private boolean measuring;
        private long allocatedBefore;
        private long allocatedTotal;
        private long invocations;

        abstract int stopCount();

        @Setup(Level.Trial)
        public void build() {
            fleet = new Fleet(replicas);
            int k = stopCount();
            int deployments = fleet.members.length;
            smaller = new DeploymentSpec[deployments];
            for (int d = 0; d < deployments; d++) {
                Fleet.Member member = fleet.members[d];
                int share = k / deployments + (d < k % deployments ? 1 : 0);
                smaller[d] = share == 0 ? null : member.spec.withNumReplicas(member.spec.numReplicas() - share);
            }
        }

        @Setup(Level.Iteration)
        public void startIteration(IterationParams iteration) {
            measuring = iteration.getType() == IterationType.MEASUREMENT;
        }

        /** Back to N RUNNING: the original spec, a tick that starts k replicas, their started reports, a tick. */
        @Setup(Level.Invocation)
        public void restore() {
            if (scaledDown) {
                Controller controller = fleet.controller;
                for (int d = 0; d < fleet.members.length; d++) {
                    if (smaller[d] != null) {
                        Fleet.Member member = fleet.members[d];
                        controller.apply(member.spec, member.launcher, member.router, fleet.statusSink);
                    }
                }
                controller.tick();
                for (Fleet.Member member : fleet.members) {
                    LongList ids = member.launcher.started;
                    for (int i = 0; i < ids.size(); i++) {
                        member.launcher.events.started(ids.get(i), member.replica(ids.get(i)));
                    }
                    member.launcher.clear();
                }
                controller.tick();
                scaledDown = false;
                if (fleet.routable() != replicas) {
                    throw new IllegalStateException("restored " + fleet.routable() + " routable replicas, expected " + replicas);
                }
            }
            allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
        }

        /** The timed part: the smaller specs, a tick, the stopped reports. */
        void run() {
            Controller controller = fleet.controller;
            Fleet.Member[] members = fleet.members;
            for (int d = 0; d < members.length; d++) {
                if (smaller[d] != null) {
                    Fleet.Member member = members[d];
                    controller.apply(smaller[d], member.launcher, member.router, fleet.statusSink);
                }
            }
            controller.tick();
            int count = 0;
            for (Fleet.Member member : members) {
                LongList ids = member.launcher.stopped;
                for (int i = 0; i < ids.size(); i++) {
                    member.launcher.events.stopped(ids.get(i));
                }
                count += ids.size();
            }
            stopped = count;
        }

        @TearDown(Level.Invocation)
        public void check() {
            long allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
            if (measuring) {
                allocatedTotal += allocated;
                invocations++;
            }
            scaledDown = true;
            if (stopped != stopCount() || fleet.routable() != replicas - stopCount()) {
                throw new IllegalStateException("asked to stop " + stopCount() + " replicas; the launchers were asked to stop "
                        + stopped + " and " + fleet.routable() + " of " + replicas + " are still routable");
            }
            for (Fleet.Member member : fleet.members) {
                member.launcher.clear();
            }
        }

        @TearDown(Level.Trial)
        public void report(BenchmarkParams benchmark) {
            fleet.requireSteady(replicas - (scaledDown ? stopCount() : 0));
            if (invocations > 0) {
                System.out.printf("%n%s N=%d k=%d: %,d B allocated per scale-down (mean of %,d measured invocations)%n",
                        benchmark.getBenchmark().substring(benchmark.getBenchmark().lastIndexOf('.') + 1), replicas,
                        stopCount(), allocatedTotal / invocations, invocations);
            }
        }
    }

    public static class StopTwo extends ScaleDown {
        @Override
        int stopCount() {
            return 2;
        }
    }

    public static class StopTenPercent extends ScaleDown {
        @Override
        int stopCount() {
            return (replicas + 9) / 10;
        }
    }

    /**
     * A controller with {@code total} RUNNING replicas in ceil(total / 1024) deployments of equal size, built as
     * production builds it: {@code apply}, a tick that starts them, one {@code replicaStarted} per replica, a tick.
     */
    static final class Fleet {

        /** Kept here so that the logger, and the level set on it, are not garbage-collected. */
        private static final Logger CONTROLLER_LOG = Logger.getLogger(Controller.class.getName());

        static {
            CONTROLLER_LOG.setLevel(java.util.logging.Level.OFF);
        }

        final Controller controller = new Controller(System::nanoTime, Runnable::run);
        final Member[] members;
        DeploymentStatus lastStatus;
        final Consumer<DeploymentStatus> statusSink = status -> lastStatus = status;

        Fleet(int total) {
            int deployments = (total + MAX_PER_DEPLOYMENT - 1) / MAX_PER_DEPLOYMENT;
            if (total % deployments != 0) {
                throw new IllegalArgumentException(total + " replicas do not split evenly into " + deployments + " deployments");
            }
            members = new Member[deployments];
            for (int d = 0; d < deployments; d++) {
                members[d] = new Member("bench-" + d, total / deployments);
                controller.apply(members[d].spec, members[d].launcher, members[d].router, statusSink);
            }
            controller.tick();
            for (Member member : members) {
                LongList ids = member.launcher.started;
                for (int i = 0; i < ids.size(); i++) {
                    member.launcher.events.started(ids.get(i), member.replica(ids.get(i)));
                }
                member.launcher.clear();
            }
            controller.tick();
            requireSteady(total);
        }

        /** Routable replicas over all deployments, as the routers see them. */
        int routable() {
            int routable = 0;
            for (Member member : members) {
                routable += member.router.routableReplicas();
            }
            return routable;
        }

        /** Fails unless the fleet holds exactly {@code total} replicas, all RUNNING and routable, and nothing is starting. */
        void requireSteady(int total) {
            int running = 0;
            for (Member member : members) {
                List<ReplicaRecord> records = controller.replicas(member.name);
                for (ReplicaRecord record : records) {
                    if (record.state() != ReplicaState.RUNNING) {
                        throw new IllegalStateException("replica " + record.name() + " is " + record.state());
                    }
                }
                if (member.router.routableReplicas() != records.size()) {
                    throw new IllegalStateException(member.name + ": " + records.size() + " replicas but "
                            + member.router.routableReplicas() + " routable");
                }
                running += records.size();
            }
            if (running != total) {
                throw new IllegalStateException(running + " replicas RUNNING, expected " + total);
            }
        }

        /** One deployment: its spec, fake launcher, real router, and one fake replica per id slot. */
        static final class Member {
            final String name;
            final DeploymentSpec spec;
            final RecordingLauncher launcher = new RecordingLauncher();
            final Router<String, String> router;
            final IdleReplica[] replicas;

            Member(String name, int size) {
                this.name = name;
                this.spec = DeploymentSpec.defaults(name, "fake:model").withNumReplicas(size);
                this.router = new Router<>(name, spec.admission().maxQueuedRequests(), System::nanoTime);
                this.replicas = new IdleReplica[size];
                for (int i = 0; i < size; i++) {
                    replicas[i] = new IdleReplica(i);
                }
            }

            /** A fake for replica {@code id}; ids that differ by the deployment's size share one (never both routed). */
            IdleReplica replica(long id) {
                return replicas[(int) (id % replicas.length)];
            }
        }
    }

    /**
     * Records the ids it is asked to start and stop, and the deployment's report channel (the controller hands every
     * replica of a deployment the same one); nothing else: no replica ever reports by itself, the benchmark reports
     * for them through {@link #events}.
     */
    static final class RecordingLauncher implements ReplicaLauncher<String, String> {

        final LongList started = new LongList();
        final LongList stopped = new LongList();
        ReplicaEvents<String, String> events;

        @Override
        public void start(DeploymentSpec spec, ReplicaRecord replica, ReplicaEvents<String, String> events) {
            this.events = events;
            started.add(replica.id());
        }

        @Override
        public void stop(ReplicaRecord replica, Duration drain, ReplicaEvents<String, String> events) {
            this.events = events;
            stopped.add(replica.id());
        }

        void clear() {
            started.clear();
            stopped.clear();
        }
    }

    /** A growable list of longs that allocates only when it grows; it never shrinks. */
    static final class LongList {
        private long[] values = new long[16];
        private int size;

        void add(long value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        long get(int index) {
            return values[index];
        }

        long last() {
            return values[size - 1];
        }

        int size() {
            return size;
        }

        void clear() {
            size = 0;
        }
    }

    /** A routable replica that is never sent a request: the benchmarks have no request traffic. */
    record IdleReplica(long id) implements RoutableReplica<String, String> {

        @Override
        public int inFlight() {
            return 0;
        }

        @Override
        public boolean tryAcquire() {
            return false;
        }

        @Override
        public void release() {
            throw new IllegalStateException("no slot was taken");
        }

        @Override
        public CompletableFuture<List<String>> run(List<String> inputs, long deadlineNanos) {
            throw new UnsupportedOperationException("the benchmark sends no requests");
        }
    }

    /**
     * The baseline: Ray Serve's controller loop, reduced to what a tick with nothing to do still does there.
     * Every tick takes every replica out of its state container and puts it back (here: a new list and a new
     * record per replica), counts the running ones, and compares the count with the target.
     */
    static final class NaiveController {

        private final int target;
        private List<ReplicaRecord> records;

        NaiveController(int replicas) {
            target = replicas;
            records = new ArrayList<>(replicas);
            for (int i = 0; i < replicas; i++) {
                records.add(ReplicaRecord.starting("bench-naive", i, "1").withState(ReplicaState.RUNNING));
            }
        }

        /** @return replicas to start (0: nothing to do) */
        int tick() {
            List<ReplicaRecord> next = new ArrayList<>(records.size());
            int running = 0;
            for (ReplicaRecord record : records) {
                ReplicaRecord copy = new ReplicaRecord(record.deployment(), record.id(), record.version(), record.state(),
                        record.failures(), record.lastError());
                if (copy.state() == ReplicaState.RUNNING) {
                    running++;
                }
                next.add(copy);
            }
            records = next;
            return Math.max(0, target - running);
        }
    }
}
