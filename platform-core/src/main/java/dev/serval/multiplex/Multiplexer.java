package dev.serval.multiplex;

import dev.serval.error.NotReady;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The models of one multiplexed deployment: which of the repository's matching models are loaded, on which replica,
 * loaded on their first request and unloaded least recently used first (Ray Serve's model multiplexing). What
 * serves one model is a handle {@code H} that {@link Hosting} creates and drives (in Serval, a deployment of that
 * model with as many replicas as replicas of the multiplexed deployment hold it, none while it is not loaded).
 *
 * <p>Design. This class is the request path and the coordinator; each sub-machine is a type of its own, as Caffeine
 * keeps {@code FrequencySketch}, {@code TimerWheel} and {@code Pacer} beside {@code BoundedLocalCache}: the entries,
 * the last scan and the bounds ({@link ModelTable}); one model's pins ({@link Entry}, a {@link PinCount}); placement
 * and the models waiting for room ({@link Placer}); how long a loaded model stays ({@link Residency}); spreading hot
 * models and taking replicas back from cooled ones ({@link Spreader}); repository rescans and background closes
 * ({@link Refresher}); unloading what the bounds no longer allow ({@link Trimmer}); the meters
 * ({@link MultiplexMeters}). The one lock is this object's monitor ({@link ModelTable#lock}): every sub-machine takes
 * it, and so does the edge while it changes every model's settings, so that the {@link Hosting} calls made under it
 * and the edge's never interleave.
 *
 * <p>The request path. A request finds its model's entry first ({@link #entry}: created on the first look, neither
 * pinned nor loaded), and pins it only once it is valid and about to run ({@link #acquire(Entry)}): a request refused
 * for its headers or body loads nothing and evicts nothing, and only a pin counts as an arrival for the autoscaler
 * ({@link #takeArrived}). A request for a loaded model costs one map read, one CAS, a few volatile reads and one
 * write, takes no lock and allocates nothing ({@code MultiplexerBenchmark} measures it). A request for a model that no
 * replica holds hands it to the {@link Placer} under the lock, which loads it once however many requests ask
 * (single flight) and never blocks on the load. A request for a name the last scan did not see is refused at once,
 * without touching the file system on the request path.
 *
 * <p>Threads. Request threads call {@link #entry}, {@link #acquire} and {@link Entry#release}; one refresher thread
 * per deployment runs {@link Refresher#refresh} every {@link Tuning#refreshPeriod} and {@link Spreader#balance} every
 * {@link Spreader#BALANCE_PERIOD}; closer threads close models that left the repository; the edge calls
 * {@link #configure} (a config change, the autoscaler) and the status reads from its own threads. {@link #arrived} is
 * written by requests and cleared by the autoscaler without coordination: best-effort, as the router's.
 */
public final class Multiplexer<H> implements AutoCloseable {

    /**
     * How the multiplexer paces itself.
     *
     * @param refreshPeriod   how often the repository is rescanned
     * @param minResidency    the shortest residency of a loaded model
     * @param residencyFactor a model stays on its replica at least this many times as long as a load takes (the
     *                        mean measured), at least {@code minResidency}, at most {@link Residency#MAX}:
     *                        so that a replica changes models at most once per residency and loading takes at most
     *                        about 1/factor of a slot's time, however the requests spread; 0 with a zero
     *                        {@code minResidency}: a plain LRU
     */
    public record Tuning(Duration refreshPeriod, Duration minResidency, int residencyFactor) {

        public static final Tuning DEFAULTS = new Tuning(Duration.ofSeconds(5), Duration.ofSeconds(1), 10);

        public Tuning {
            if (refreshPeriod.isNegative() || refreshPeriod.isZero() || minResidency.isNegative()
                    || residencyFactor < 0) {
                throw new IllegalArgumentException("refresh period above 0, residency and factor at least 0: "
                        + refreshPeriod + ", " + minResidency + ", " + residencyFactor);
            }
        }
    }

    /** How the multiplexer drives what serves one model. */
    public interface Hosting<H> {

        /** The handle of {@code model} at {@code version}, serving nothing yet; under the lock: must not block. */
        H create(String model, String version);

        /**
         * The entry that will pin {@code handle}, once, under the lock, before any request can reach either: lets a
         * handle give its pin back ({@link Entry#release}) without looking its entry up again.
         */
        default void bound(H handle, Entry<H> entry) {
        }

        /**
         * Gives the model {@code count} replicas (0 unloads it: its replicas stop once their requests finished, and
         * its memory is freed); requests waiting in its queue are served once one serves. Never blocks.
         *
         * @return completed when it serves, exceptionally when its load fails
         */
        CompletableFuture<Void> replicas(H handle, int count);

        /** Rolls the model to {@code version} (a rolling update: it keeps serving). Never blocks. */
        void update(H handle, String version);

        /** Requests running on the model's replicas or waiting in its queue now. */
        int ongoing(H handle);

        /** Requests waiting in the model's queue because every replica of it is full. */
        int queued(H handle);

        /** Replicas of the model that serve now (started and warmed up). */
        int serving(H handle);

        /** Requests one replica of the model takes at once ({@code max_ongoing_requests}). */
        int capacity(H handle);

        /** Whether the model's load failed (it serves nothing and refuses requests with the reason). */
        boolean failed(H handle);

        /** Closes the handle for good, draining its requests; blocks (the closer thread, or {@link #close}). */
        void close(H handle);
    }

    /** The repository's models that the deployment's glob matches. */
    @FunctionalInterface
    public interface Catalog {

        /** Every matching model with its newest version and size; reads the file system (refresher thread). */
        Map<String, Candidate> scan();
    }

    /** One model the catalog offers: its newest version and the size of its files, the estimate of its memory. */
    public record Candidate(String version, long bytes) {
    }

    /** What a replica holds, for status: its index and its models, most recently used first. */
    public record ReplicaModels(int replica, List<String> models) {
    }

    private final LongSupplier nanoTime;
    private final Hosting<H> hosting;
    private final ModelTable<H> table;
    private final MultiplexMeters meters;
    /** Placement and the models waiting for room; {@link Entry#release} reads its waiting count. */
    final Placer<H> placer;
    private final Trimmer<H> trimmer;
    private final Spreader<H> spreader;
    private final Refresher<H> refresher;
    /** The refresher thread: runs {@link #refresher} and {@link #spreader} on their periods. */
    private final ScheduledExecutorService periodic;
    /** Whether a request arrived since the autoscaler last looked ({@link #takeArrived}); best-effort. */
    private volatile boolean arrived;

    /** Scans the catalog once (so that the first requests find their models) and starts the refresher thread. */
    public Multiplexer(String deployment, int replicas, MultiplexSpec settings, Hosting<H> hosting, Catalog catalog,
            Tuning tuning, LongSupplier nanoTime, MeterRegistry registry) {
        this.nanoTime = nanoTime;
        this.hosting = hosting;
        this.table = new ModelTable<>(this, deployment, hosting, catalog.scan(), replicas, settings);
        this.meters = new MultiplexMeters(deployment, table, registry);
        this.placer = new Placer<>(table, tuning, nanoTime, meters);
        this.trimmer = new Trimmer<>(table, placer);
        this.spreader = new Spreader<>(table, placer, nanoTime);
        this.refresher = new Refresher<>(table, catalog, placer, trimmer);
        this.periodic = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("serval-multiplex-" + deployment).daemon(true).factory());
        long every = tuning.refreshPeriod().toNanos();
        periodic.scheduleWithFixedDelay(refresher::refresh, every, every, TimeUnit.NANOSECONDS);
        long balance = Spreader.BALANCE_PERIOD.toNanos();
        periodic.scheduleWithFixedDelay(spreader::run, balance, balance, TimeUnit.NANOSECONDS);
    }

    /**
     * The entry of {@code model}, pinned (the caller must {@link Entry#release} it once its request ended), its load
     * started if no replica holds it; null when the deployment's glob matches no repository model of that name (as
     * of the last scan): {@link #entry} then {@link #acquire(Entry)}.
     *
     * @throws NotReady as {@link #acquire(Entry)}
     */
    public Entry<H> acquire(String model) {
        Entry<H> entry = entry(model);
        return entry != null && acquire(entry) ? entry : null;
    }

    /**
     * The entry of {@code model}, neither pinned nor loaded: what a request names before it is known to be valid
     * (its deployment meters it, and answers what it knows without a load); created on the first look, under the
     * lock. Null when the last scan saw no such model: nothing is created, and nothing counts as an arrival.
     *
     * @throws NotReady when the deployment is closed
     */
    public Entry<H> entry(String model) {
        return table.entry(model);
    }

    /**
     * Pins {@code entry} for a request that is valid and about to run (the caller must {@link Entry#release} it once
     * the request ended), and starts its load if no replica holds it; a request that is refused before never loads a
     * model nor evicts another. Never blocks on a load. When no room can be made for the model now (every model that
     * could be unloaded has requests), it waits for room: its requests wait in its queue (bounded, within their
     * deadlines) and it loads as soon as a release leaves a model idle.
     *
     * @return false, pinning nothing, when the entry left the repository since it was found (its name is unknown)
     * @throws NotReady when the model alone is larger than {@code max_model_memory}, or the deployment is closed
     */
    public boolean acquire(Entry<H> entry) {
        if (!arrived) {
            arrived = true;
        }
        if (entry.pin()) {
            entry.lastUsed = nanoTime.getAsLong();
            if (entry.held.length == 0) {
                placer.placed(entry);
            }
            return true;
        }
        return slowAcquire(entry);
    }

    /** The lock's way, while an unload decides about the entry (or it left the repository): pinned and placed. */
    private boolean slowAcquire(Entry<H> entry) {
        synchronized (table.lock) {
            if (table.closed()) {
                throw table.shuttingDown();
            }
            if (table.models().get(entry.model) != entry || !entry.pin()) {
                return false; // it left the repository: as unknown as if the scan had not seen it
            }
            entry.lastUsed = nanoTime.getAsLong();
            placer.placed(entry);
            return true;
        }
    }

    /**
     * Takes new settings and a new replica count (the autoscaler's, or a config change): they bound the next loads
     * at once, and models over them are unloaded as they become idle (by the refresher). At zero replicas (an
     * autoscaled deployment gone idle) every model unloads once idle, and a request's model waits for the replica
     * the autoscaler then starts.
     */
    public void configure(int replicas, MultiplexSpec settings) {
        synchronized (table.lock) {
            table.bound(replicas, settings);
            trimmer.trim();
            placer.retryWaiting();
        }
    }

    /** The replica count now. */
    public int replicas() {
        return table.replicas();
    }

    /** {@link Refresher#refresh} now, as the refresher thread does every period (tests call it instead of waiting). */
    void refresh() {
        refresher.refresh();
    }

    /** {@link Spreader#balance} now, as the refresher thread does every period (tests call it instead of waiting). */
    void balance() {
        spreader.balance();
    }

    /** Models loaded now, summed over replicas (the {@code serval_multiplex_models_loaded} gauge). */
    public int loadedCount() {
        return table.loadedCount();
    }

    /** Requests running on or waiting for the deployment's models: the sum over its models. */
    public int ongoingRequests() {
        return table.ongoingRequests();
    }

    /** Whether a request arrived since the previous call (the autoscaler's, as {@code Router.takeArrived}). */
    public boolean takeArrived() {
        if (!arrived) {
            return false;
        }
        arrived = false;
        return true;
    }

    /** What each replica holds, most recently used first; every replica listed, empty ones too. */
    public List<ReplicaModels> replicaModels() {
        synchronized (table.lock) {
            return table.replicaModels();
        }
    }

    /** The handles of every model asked for so far (loaded or not), for changes that apply to all of them. */
    public List<H> handles() {
        return table.models().values().stream().map(entry -> entry.handle).toList();
    }

    /** The handle of {@code model} if it was ever asked for (loaded or not), without pinning or loading it. */
    public H find(String model) {
        Entry<H> entry = table.models().get(model);
        return entry == null ? null : entry.handle;
    }

    /** The replicas that hold {@code model} now, in the order it was loaded onto them; empty when none does. */
    public List<Integer> replicasOf(String model) {
        Entry<H> entry = table.models().get(model);
        return entry == null ? List.of() : Arrays.stream(entry.held).boxed().toList();
    }

    /** Whether {@code model} waits for room: asked for, no replica holds it, and none could be made free yet. */
    public boolean waitsForRoom(String model) {
        synchronized (table.lock) {
            Entry<H> entry = table.models().get(model);
            return entry != null && placer.waits(entry);
        }
    }

    /** Whether the last scan saw {@code model} among the repository's matching models. */
    public boolean matches(String model) {
        return table.candidates().containsKey(model);
    }

    /** The matching models of the last scan, by name. */
    public Map<String, Candidate> candidates() {
        return table.candidates();
    }

    /** Stops the refresher thread and closes every model's handle (each drains its requests). */
    @Override
    public void close() {
        List<Entry<H>> all;
        periodic.shutdownNow();
        try {
            // A refresh under way may still hand closes to the closer: they are awaited below.
            periodic.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (table.lock) {
            all = table.close();
            if (all == null) {
                return;
            }
        }
        all.parallelStream().forEach(entry -> hosting.close(entry.handle));
        refresher.awaitCloses(); // no refresh runs any more: none starts after this
        meters.remove();
    }

    /**
     * One model of the deployment, loaded or not, with the requests that hold it ({@link PinCount}, which it is).
     *
     * <p>Design. {@link #held} is written under the multiplexer's lock, by the {@link Placer} only, and read by
     * requests after they pinned the entry: a pinned entry that shows a replica keeps at least one until released.
     * {@link #lastUsed} is written by every request that pins it and read when choosing what to unload: best-effort
     * (two requests of the same nanosecond are in either order). {@link #version} and {@link #bytes} are written by
     * the refresher thread under the lock.
     */
    public static final class Entry<H> extends PinCount {

        /** {@link #held} of a model no replica holds. */
        static final int[] NONE = new int[0];

        private final Multiplexer<H> owner;
        final String model;
        final H handle;
        volatile String version;
        volatile long bytes;
        /** The replicas that hold it, in the order it was loaded onto them; empty while not loaded. Immutable. */
        volatile int[] held = NONE;
        volatile long lastUsed;
        /** When it was last loaded onto its first replica ({@code nanoTime}); under the lock. */
        long loadedAt;
        /** Since when a spread model's load has been low ({@code nanoTime}), or 0; under the lock. */
        long calmSince;

        Entry(Multiplexer<H> owner, String model, H handle, Candidate candidate) {
            this.owner = owner;
            this.model = model;
            this.handle = handle;
            this.version = candidate.version();
            this.bytes = candidate.bytes();
        }

        public String model() {
            return model;
        }

        public H handle() {
            return handle;
        }

        /** {@link Multiplexer#acquire(Entry)}: pins it for a request about to run, loading it if needed. */
        public boolean acquire() {
            return owner.acquire(this);
        }

        /**
         * Gives back the pin {@link Multiplexer#acquire} took; exactly once per acquire. The last pin's release retries
         * the models waiting for room while some wait (the model released may now be idle); a release that leaves the
         * model held takes no lock.
         */
        public void release() {
            if (unpin() && owner != null && owner.placer.waitingCount() > 0) {
                owner.placer.retryWaiting(); // only a model no request holds any more can make room, or stop waiting
            }
        }
    }
}
