package dev.serval.multiplex;

import dev.serval.error.NotReady;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The models of one multiplexed deployment: which of the repository's matching models are loaded, on which replica,
 * loaded on their first request and unloaded least recently used first (Ray Serve's model multiplexing). What
 * serves one model is a handle {@code H} that {@link Hosting} creates and drives (in Serval, a deployment of that
 * model with as many replicas as replicas of the multiplexed deployment hold it, none while it is not loaded).
 *
 * <p>Design. {@link #models} is an immutable map from model name to {@link Entry}, replaced whole under this object's
 * lock when a model is first asked for or leaves the repository; request threads read it once per request. An
 * entry lives as long as its model matches: unloading a model takes its replica away and keeps the entry, so that a
 * request racing an unload finds the same handle. Each entry has
 * <ul>
 *   <li>{@code pins}: requests holding it, taken by CAS on the request path ({@link #acquire(Entry)}) and given back by
 *       {@link Entry#release}. An unload moves it from 0 to {@link Entry#RETIRING} by CAS and back once the entry is
 *       marked unloaded, so it never unloads a model a request holds, and a request never holds a model while it is
 *       being unloaded;</li>
 *   <li>{@code held}: the replicas that hold it (an immutable array, empty while it is not loaded); written under the
 *       lock, read by requests after they pinned the entry (a pinned entry that shows a replica keeps at least one
 *       until released);</li>
 *   <li>{@code lastUsed}: written by every request that pins it, read when choosing what to unload: best-effort (the
 *       order of two requests of the same nanosecond is either).</li>
 * </ul>
 * A request finds its model's entry first ({@link #entry}: created on the first look, neither pinned nor loaded), and
 * pins it only once it is valid and about to run ({@link #acquire(Entry)}): a request refused for its headers or body
 * loads nothing and evicts nothing, and only a pin counts as an arrival for the autoscaler ({@link #takeArrived}).
 * A request for a loaded model costs one map read, one CAS, a few volatile reads and one write, and allocates
 * nothing ({@code MultiplexerBenchmark} measures it). A request for a model that no replica holds
 * takes the lock: the first one places the model ({@link Placement}) and starts its load; the ones that come while it
 * loads find it placed and wait in its handle's queue, so a model loads once however many requests ask for it at once
 * (single flight). Loads never block the caller. When no room can be made (every model that could go is busy), the
 * model waits for room in {@link #waiting}, its requests in its queue: the release of a model's last pin retries the
 * waiting models only while some wait ({@link #waitingCount}, a flag that gates a rare check; a release that leaves
 * its model held cannot make room and takes no lock), and so does the balancer.
 *
 * <p>A model stays on its replica at least its residency once loaded ({@link Tuning#residencyFactor} times the
 * measured load time, at least {@link Tuning#minResidency}): when the models asked for do not fit, a replica changes
 * models at most once per residency, so loading cannot take the CPU away from inference (an LRU of loaded models
 * otherwise thrashes: a load of MiniLM costs dozens of inferences).
 *
 * <p>Hot models spread ({@link #balance}, every {@link #BALANCE_PERIOD} on the refresher thread): a model whose
 * replicas are all full (requests wait in its queue) is loaded on one more replica that has room, as Ray Serve routes
 * a model's overflow to replicas that then load it; a model whose load has fallen to what one replica fewer serves at
 * half its capacity, for {@link #CALM_PERIOD}, gives a replica back. So the deployment's replica count (fixed, or the
 * autoscaler's, on the sum of its models' requests) bounds both how many models it holds and how far a hot one
 * spreads.
 *
 * <p>The refresher thread rescans the repository every {@code refreshPeriod} ({@link Catalog}): a model whose newest
 * version changed rolls to it ({@link Hosting#update}); a model that left the repository is closed once no request
 * holds it, on a closer thread ({@link #closer}: a close drains the model's requests, which may take its graceful
 * timeout, while the refresher goes on rescanning, spreading and placing waiting models); a model whose load failed is
 * unloaded once no request holds it (the next request loads it again); models over the bounds (after the settings or
 * the replica count shrank) are unloaded when idle. Which names exist is known only from the last scan: a request for a
 * name the scan did not see is refused at once, without touching the file system on the request path.
 */
public final class Multiplexer<H> implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Multiplexer.class.getName());
    /** How often hot models spread and cooled ones give replicas back. */
    static final Duration BALANCE_PERIOD = Duration.ofMillis(200);
    /** How long a spread model's load must stay low before it gives a replica back. */
    static final Duration CALM_PERIOD = Duration.ofSeconds(5);
    private static final int[] NONE = new int[0];
    /** The longest residency, whatever a load measured. */
    static final Duration MAX_RESIDENCY = Duration.ofMinutes(1);

    /**
     * How the multiplexer paces itself.
     *
     * @param refreshPeriod   how often the repository is rescanned
     * @param minResidency    the shortest residency of a loaded model
     * @param residencyFactor a model stays on its replica at least this many times as long as a load takes (the
     *                        mean measured), at least {@code minResidency}, at most {@link #MAX_RESIDENCY}: so that a
     *                        replica changes models at most once per residency and loading takes at most about
     *                        1/factor of a slot's time, however the requests spread; 0 with a zero
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

    private final String deployment;
    private final Hosting<H> hosting;
    private final Catalog catalog;
    private final LongSupplier nanoTime;
    private final AtomicReference<Map<String, Entry<H>>> models = new AtomicReference<>(Map.of());
    private final ScheduledExecutorService refresher;
    /**
     * Closes the models that left the repository: a close drains the model's requests and may take its graceful
     * timeout, which must not stall the refresher (rescans, spreading, models waiting for room).
     */
    private final ExecutorService closer;
    /** The closes {@link #closer} runs now, which {@link #close} waits for; guarded by the lock. */
    private final Set<CompletableFuture<Void>> closing = new HashSet<>();
    private final Counter loads;
    private final Counter evictions;
    private final Timer loadTime;
    private final Gauge loadedGauge;
    private final MeterRegistry registry;
    /** The last scan: written by the refresher thread, read by requests for names not yet in {@link #models}. */
    private volatile Map<String, Candidate> candidates;
    /**
     * Models asked for while no room could be made for them (every model that could have gone had requests), in the
     * order they were asked for; their requests wait in their own queues. Guarded by the lock.
     */
    private final java.util.LinkedHashSet<Entry<H>> waiting = new java.util.LinkedHashSet<>();
    /**
     * {@code waiting.size()}, written under the lock and read without it by every {@link Entry#release}: a release
     * takes the lock to retry the waiting models only while some wait (a flag that gates a rare check).
     */
    private volatile int waitingCount;
    /**
     * Whether a request arrived since the autoscaler last looked ({@link #takeArrived}): best-effort, as the router's.
     */
    private volatile boolean arrived;
    private final Tuning tuning;
    /**
     * How long a model stays on its replica at least once loaded, before it may be unloaded to make room: {@link
     * Tuning#residencyFactor} times the mean measured load time, within its bounds. Written when a load completes,
     * read under the lock: best-effort.
     */
    private volatile long residencyNanos;
    /** The replica count; written under the lock ({@link #configure}), read by status without it. */
    private volatile int replicas;
    /** Written under the lock ({@link #configure}), read under it. */
    private MultiplexSpec settings;
    private volatile boolean closed;

    /** Scans the catalog once (so that the first requests find their models) and starts the refresher. */
    public Multiplexer(String deployment, int replicas, MultiplexSpec settings, Hosting<H> hosting, Catalog catalog,
            Tuning tuning, LongSupplier nanoTime, MeterRegistry registry) {
        this.deployment = deployment;
        this.tuning = tuning;
        this.residencyNanos = tuning.minResidency().toNanos();
        this.hosting = hosting;
        this.catalog = catalog;
        this.nanoTime = nanoTime;
        this.replicas = Math.max(0, replicas);
        this.settings = settings;
        this.registry = registry;
        this.candidates = Map.copyOf(catalog.scan());
        this.loads = Counter.builder("serval.multiplex.loads").tag("deployment", deployment)
                .description("Models a multiplexed deployment loaded onto a replica: on demand, or to spread a hot "
                        + "model").register(registry);
        this.evictions = Counter.builder("serval.multiplex.evictions").tag("deployment", deployment)
                .description("Models a multiplexed deployment unloaded from a replica: to make room, after a failed "
                        + "load, once a spread model cooled down, or because they left the repository")
                .register(registry);
        this.loadTime = Timer.builder("serval.multiplex.load").tag("deployment", deployment)
                .description("From the request that asked for an unloaded model to its model serving")
                .register(registry);
        this.loadedGauge = Gauge.builder("serval.multiplex.models.loaded", this, Multiplexer::loadedCount)
                .tag("deployment", deployment).description("Models the replicas of a multiplexed deployment hold, "
                        + "summed over its replicas").register(registry);
        this.refresher = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("serval-multiplex-" + deployment).daemon(true).factory());
        this.closer = Executors.newCachedThreadPool(
                Thread.ofPlatform().name("serval-multiplex-close-" + deployment + "-", 0).daemon(true).factory());
        long every = tuning.refreshPeriod().toNanos();
        refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.NANOSECONDS);
        long balance = BALANCE_PERIOD.toNanos();
        refresher.scheduleWithFixedDelay(this::balanceSafely, balance, balance, TimeUnit.NANOSECONDS);
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
        Entry<H> entry = models.get().get(model);
        if (entry != null) {
            return entry;
        }
        return candidates.containsKey(model) ? created(model) : null;
    }

    /** The lock's way: the entry of a model the last scan saw, created if needed; null if it has gone since. */
    private synchronized Entry<H> created(String model) {
        if (closed) {
            throw new NotReady("deployment '" + deployment + "' is shutting down");
        }
        Entry<H> entry = models.get().get(model);
        if (entry == null) {
            Candidate candidate = candidates.get(model);
            if (candidate == null) {
                return null;
            }
            entry = new Entry<>(this, model, hosting.create(model, candidate.version()), candidate);
            hosting.bound(entry.handle, entry);
            Map<String, Entry<H>> next = new HashMap<>(models.get());
            next.put(model, entry);
            models.set(Map.copyOf(next));
        }
        return entry;
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
                placed(entry);
            }
            return true;
        }
        return slowAcquire(entry);
    }

    /** The lock's way, while an unload decides about the entry (or it left the repository): pinned and placed. */
    private synchronized boolean slowAcquire(Entry<H> entry) {
        if (closed) {
            throw new NotReady("deployment '" + deployment + "' is shutting down");
        }
        if (models.get().get(entry.model) != entry || !entry.pin()) {
            return false; // it left the repository: as unknown as if the scan had not seen it
        }
        entry.lastUsed = nanoTime.getAsLong();
        placed(entry);
        return true;
    }

    /** A pinned entry that no replica held when it was pinned: placed (loaded) unless another request did it. */
    private synchronized void placed(Entry<H> entry) {
        if (entry.held.length > 0) {
            return;
        }
        if (closed) {
            entry.release();
            throw new NotReady("deployment '" + deployment + "' is shutting down");
        }
        if (waiting.contains(entry)) {
            return; // waits for room already: releases and the balancer retry it, not every request
        }
        try {
            if (!tryPlace(entry, entry.bytes)) {
                waiting.add(entry);
                waitingCount = waiting.size();
            }
        } catch (RuntimeException e) {
            entry.release();
            throw e;
        }
    }

    /**
     * Under the lock: every model on every replica, as {@link Placement} sees them, with their entries. A model's last
     * replica is busy while requests hold it, run on it or wait for it, and for its residency after it loaded.
     */
    private Map<Placement.Held, Entry<H>> rows() {
        Map<Placement.Held, Entry<H>> rows = new java.util.LinkedHashMap<>();
        long now = nanoTime.getAsLong();
        long residency = residencyNanos;
        for (Entry<H> entry : models.get().values()) {
            int[] held = entry.held;
            if (held.length == 0) {
                continue;
            }
            int ongoing = hosting.ongoing(entry.handle);
            boolean busy = held.length == 1 && (entry.pins.get() != 0 || ongoing > 0
                    || now - entry.loadedAt < residency);
            for (int replica : held) {
                rows.put(new Placement.Held(entry.model, replica, held.length == 1 ? entry.bytes : 0, entry.lastUsed,
                        ongoing / held.length, busy), entry);
            }
        }
        return rows;
    }

    /** Under the lock: what the loaded models take, each counted once. */
    private long loadedBytes() {
        long total = 0;
        for (Entry<H> entry : models.get().values()) {
            if (entry.held.length > 0) {
                total += entry.bytes;
            }
        }
        return total;
    }

    /**
     * Under the lock: loads {@code entry} onto one more replica (its first, or one more of a hot model), unloading
     * what makes room; false when every model that could make room is busy.
     *
     * @param bytes what it adds: its size for its first replica, 0 for one more (its weights are shared)
     * @throws NotReady when the model alone is larger than {@code max_model_memory}
     */
    private boolean tryPlace(Entry<H> entry, long bytes) {
        for (int attempt = 0; ; attempt++) {
            Map<Placement.Held, Entry<H>> rows = rows();
            Placement.Result result = Placement.place(entry.model, bytes, List.copyOf(rows.keySet()), loadedBytes(),
                    replicas, settings.maxModelsPerReplica(), settings.maxModelMemory(), entry.held);
            if (result instanceof Placement.Refusal refusal) {
                if (refusal.tooLarge()) {
                    throw new NotReady(refusal.reason());
                }
                return false;
            }
            Placement.Decision decision = (Placement.Decision) result;
            // A model's last replica goes only if no request pinned it since it was read: retire those first.
            List<Entry<H>> retired = new ArrayList<>();
            boolean allRetired = true;
            for (Placement.Held row : decision.evict()) {
                Entry<H> victim = rows.get(row);
                if (victim.held.length == 1) {
                    if (!victim.retire()) {
                        allRetired = false; // a request pinned it since it was read: it is busy after all
                        break;
                    }
                    retired.add(victim);
                }
            }
            if (!allRetired) {
                retired.forEach(Entry::reinstate);
                if (attempt < 3) {
                    continue;
                }
                return false; // the models that would make room keep getting requests
            }
            for (Placement.Held row : decision.evict()) {
                Entry<H> victim = rows.get(row);
                unloadFrom(victim, row.replica());
                if (retired.contains(victim)) {
                    victim.reinstate();
                }
            }
            boolean first = entry.held.length == 0;
            entry.held = with(entry.held, decision.replica());
            long started = nanoTime.getAsLong();
            if (first) {
                entry.loadedAt = started;
            }
            loads.increment();
            CompletableFuture<Void> serving = hosting.replicas(entry.handle, entry.held.length);
            if (first) {
                serving.whenComplete((served, failure) -> {
                    if (failure == null) {
                        loadTime.record(nanoTime.getAsLong() - started, TimeUnit.NANOSECONDS);
                        residencyNanos = Math.max(tuning.minResidency().toNanos(), Math.min(MAX_RESIDENCY.toNanos(),
                                (long) (tuning.residencyFactor() * loadTime.mean(TimeUnit.NANOSECONDS))));
                    }
                });
            }
            return true;
        }
    }

    /**
     * Under the lock: takes {@code entry} off {@code replica}. Its last replica only with the entry retired by the
     * caller (no request holds it), and only if idle when called otherwise ({@link #unloadIfIdle}).
     */
    private void unloadFrom(Entry<H> entry, int replica) {
        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': unloading model ''{1}'' from replica {2}", deployment,
                entry.model, replica);
        entry.held = without(entry.held, replica);
        entry.calmSince = 0;
        hosting.replicas(entry.handle, entry.held.length);
        evictions.increment();
    }

    /** Under the lock: unloads {@code entry} from its last replica if no request holds it; whether it did. */
    private boolean unloadIfIdle(Entry<H> entry) {
        int[] held = entry.held;
        if (held.length == 0 || hosting.ongoing(entry.handle) > 0 || !entry.retire()) {
            return false;
        }
        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': unloading model ''{1}'' from replica(s) {2}",
                deployment, entry.model, Arrays.toString(held));
        entry.held = NONE;
        entry.calmSince = 0;
        hosting.replicas(entry.handle, 0);
        evictions.increment(held.length);
        entry.reinstate();
        return true;
    }

    /**
     * Places the models waiting for room, in the order they were asked for, while room can be made; drops those whose
     * requests all ended (nothing waits for them any more). After a release while some wait, and at each refresh.
     */
    private synchronized void retryWaiting() {
        for (java.util.Iterator<Entry<H>> each = waiting.iterator(); each.hasNext(); ) {
            Entry<H> entry = each.next();
            if (entry.held.length > 0 || (entry.pins.get() <= 0 && hosting.ongoing(entry.handle) == 0)
                    || !models.get().containsKey(entry.model)) {
                each.remove();
                continue;
            }
            boolean placed;
            try {
                placed = !closed && tryPlace(entry, entry.bytes);
            } catch (RuntimeException e) {
                placed = true; // cannot ever fit (the bound shrank): its requests wait out their deadlines
                LOG.log(System.Logger.Level.WARNING, "deployment ''{0}'': model ''{1}'' cannot load: {2}", deployment,
                        entry.model, e.getMessage());
            }
            if (!placed) {
                break; // no room for the first: the order is kept
            }
            each.remove();
        }
        waitingCount = waiting.size();
    }

    /**
     * Takes new settings and a new replica count (the autoscaler's, or a config change): they bound the next loads
     * at once, and models over them are unloaded as they become idle (by the refresher). At zero replicas (an
     * autoscaled deployment gone idle) every model unloads once idle, and a request's model waits for the replica
     * the autoscaler then starts.
     */
    public synchronized void configure(int replicas, MultiplexSpec settings) {
        this.replicas = Math.max(0, replicas);
        this.settings = settings;
        trim();
        retryWaiting();
    }

    /** The replica count now. */
    public int replicas() {
        return replicas;
    }

    /** Refresher thread: {@link #balance}, logged instead of thrown (a throw would end the schedule). */
    private void balanceSafely() {
        try {
            balance();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "deployment '" + deployment + "': balancing the models failed", e);
        }
    }

    /**
     * Spreads hot models and takes replicas back from cooled ones (see the class comment). Refresher thread, every
     * {@link #BALANCE_PERIOD}; under the lock.
     */
    synchronized void balance() {
        if (closed) {
            return;
        }
        long now = nanoTime.getAsLong();
        for (Entry<H> entry : models.get().values()) {
            int[] held = entry.held;
            int count = held.length;
            if (count == 0) {
                continue;
            }
            H handle = entry.handle;
            if (hosting.queued(handle) > 0 && hosting.serving(handle) >= count && count < replicas) {
                entry.calmSince = 0;
                if (tryPlace(entry, 0)) {
                    LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' is busy on {2} replica(s); "
                            + "loading it on one more", deployment, entry.model, count);
                }
            } else if (count > 1 && hosting.ongoing(handle) * 2L <= (long) (count - 1) * hosting.capacity(handle)) {
                if (entry.calmSince == 0) {
                    entry.calmSince = now;
                } else if (now - entry.calmSince >= CALM_PERIOD.toNanos()) {
                    unloadFrom(entry, held[count - 1]); // its other replicas take its requests
                }
            } else {
                entry.calmSince = 0;
            }
        }
        if (waitingCount > 0) {
            retryWaiting(); // a residency may have ended: no release says so
        }
    }

    /** Refresher thread: rescans the catalog and applies what changed (see the class comment). Never throws. */
    void refresh() {
        try {
            Map<String, Candidate> scanned = Map.copyOf(catalog.scan());
            candidates = scanned;
            List<Entry<H>> gone = new ArrayList<>();
            synchronized (this) {
                if (closed) {
                    return;
                }
                Map<String, Entry<H>> next = new HashMap<>(models.get());
                for (Entry<H> entry : models.get().values()) {
                    Candidate candidate = scanned.get(entry.model);
                    if (candidate == null) {
                        if (entry.retire()) {
                            if (entry.held.length > 0) {
                                evictions.increment();
                            }
                            entry.held = NONE;
                            next.remove(entry.model);
                            gone.add(entry); // stays RETIRING: no request pins it again
                        }
                    } else if (!candidate.version().equals(entry.version)) {
                        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' rolls from version {2}"
                                + " to {3}", deployment, entry.model, entry.version, candidate.version());
                        entry.version = candidate.version();
                        entry.bytes = candidate.bytes();
                        hosting.update(entry.handle, candidate.version());
                    } else if (entry.held.length > 0 && hosting.failed(entry.handle)) {
                        unloadIfIdle(entry); // the next request loads it again
                    }
                }
                if (next.size() != models.get().size()) {
                    models.set(Map.copyOf(next));
                }
                trim();
                retryWaiting();
            }
            for (Entry<H> entry : gone) {
                LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' left the repository; closing it",
                        deployment, entry.model);
                closeInBackground(entry);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "deployment '" + deployment + "': refreshing the models failed; "
                    + "trying again next period", e);
        }
    }

    /** Refresher thread: closes a model that left the repository on {@link #closer}, for {@link #close} to await. */
    private void closeInBackground(Entry<H> entry) {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> hosting.close(entry.handle), closer);
        synchronized (this) {
            closing.add(done);
        }
        done.whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOG.log(System.Logger.Level.ERROR, "deployment '" + deployment + "': closing model '" + entry.model
                        + "' failed", failure);
            }
            synchronized (this) {
                closing.remove(done);
            }
        });
    }

    /**
     * Under the lock: unloads what the bounds no longer allow, least recently used first: a model's replicas beyond
     * the replica count (its extra replicas at once, its last one when idle), models over {@code
     * max_models_per_replica} on a replica and over {@code max_model_memory} (extra replicas at once, last ones when
     * idle). Busy ones stay until a later refresh finds them idle.
     */
    private void trim() {
        List<Entry<H>> loaded = new ArrayList<>();
        for (Entry<H> entry : models.get().values()) {
            if (entry.held.length > 0) {
                loaded.add(entry);
            }
        }
        loaded.sort(Comparator.comparingLong(e -> e.lastUsed));
        int[] count = new int[replicas];
        for (Entry<H> entry : loaded) {
            for (int replica : entry.held) {
                if (replica < replicas) {
                    count[replica]++;
                }
            }
        }
        for (Entry<H> entry : loaded) {
            for (int replica : entry.held) {
                boolean outside = replica >= replicas;
                boolean crowded = !outside && count[replica] > settings.maxModelsPerReplica();
                if (!outside && !crowded) {
                    continue;
                }
                if (entry.held.length > 1) {
                    unloadFrom(entry, replica);
                } else if (!unloadIfIdle(entry)) {
                    continue;
                }
                if (!outside) {
                    count[replica]--;
                }
            }
        }
        long limit = settings.maxModelMemory();
        long bytes = loadedBytes();
        for (Entry<H> entry : loaded) {
            if (limit > 0 && bytes > limit && entry.held.length > 0) {
                long size = entry.bytes;
                if (unloadIfIdle(entry)) {
                    bytes -= size;
                }
            }
        }
    }

    /** Models loaded now, summed over replicas (the {@code serval_multiplex_models_loaded} gauge). */
    public int loadedCount() {
        int loaded = 0;
        for (Entry<H> entry : models.get().values()) {
            loaded += entry.held.length;
        }
        return loaded;
    }

    /** Requests running on or waiting for the deployment's models: the sum over its models. */
    public int ongoingRequests() {
        int ongoing = 0;
        for (Entry<H> entry : models.get().values()) {
            ongoing += hosting.ongoing(entry.handle);
        }
        return ongoing;
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
    public synchronized List<ReplicaModels> replicaModels() {
        List<List<Entry<H>>> byReplica = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            byReplica.add(new ArrayList<>());
        }
        for (Entry<H> entry : models.get().values()) {
            for (int replica : entry.held) {
                while (byReplica.size() <= replica) {
                    byReplica.add(new ArrayList<>()); // a replica beyond the count, still holding a busy model
                }
                byReplica.get(replica).add(entry);
            }
        }
        List<ReplicaModels> view = new ArrayList<>();
        for (int r = 0; r < byReplica.size(); r++) {
            byReplica.get(r).sort(Comparator.comparingLong((Entry<H> e) -> e.lastUsed).reversed());
            view.add(new ReplicaModels(r, byReplica.get(r).stream().map(e -> e.model).toList()));
        }
        return view;
    }

    /** The handles of every model asked for so far (loaded or not), for changes that apply to all of them. */
    public List<H> handles() {
        return models.get().values().stream().map(entry -> entry.handle).toList();
    }

    /** The handle of {@code model} if it was ever asked for (loaded or not), without pinning or loading it. */
    public H find(String model) {
        Entry<H> entry = models.get().get(model);
        return entry == null ? null : entry.handle;
    }

    /** The replicas that hold {@code model} now, in the order it was loaded onto them; empty when none does. */
    public List<Integer> replicasOf(String model) {
        Entry<H> entry = models.get().get(model);
        return entry == null ? List.of() : Arrays.stream(entry.held).boxed().toList();
    }

    /** Whether {@code model} waits for room: asked for, no replica holds it, and none could be made free yet. */
    public synchronized boolean waitsForRoom(String model) {
        Entry<H> entry = models.get().get(model);
        return entry != null && waiting.contains(entry);
    }

    /** Whether the last scan saw {@code model} among the repository's matching models. */
    public boolean matches(String model) {
        return candidates.containsKey(model);
    }

    /** The matching models of the last scan, by name. */
    public Map<String, Candidate> candidates() {
        return candidates;
    }

    /** Stops the refresher and closes every model's handle (each drains its requests). */
    @Override
    public void close() {
        List<Entry<H>> all;
        refresher.shutdownNow();
        try {
            // A refresh under way may still hand closes to the closer: they are awaited below.
            refresher.awaitTermination(1, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(models.get().values());
            models.set(Map.of());
        }
        all.parallelStream().forEach(entry -> hosting.close(entry.handle));
        List<CompletableFuture<Void>> started;
        synchronized (this) {
            started = List.copyOf(closing); // no refresh runs any more: none starts after this
        }
        started.forEach(done -> done.exceptionally(failure -> null).join()); // a failure was logged
        closer.shutdown();
        for (Meter meter : List.<Meter>of(loads, evictions, loadTime, loadedGauge)) {
            registry.remove(meter);
        }
    }

    private static int[] with(int[] replicas, int replica) {
        int[] next = Arrays.copyOf(replicas, replicas.length + 1);
        next[replicas.length] = replica;
        return next;
    }

    private static int[] without(int[] replicas, int replica) {
        return Arrays.stream(replicas).filter(r -> r != replica).toArray();
    }

    /** One model of the deployment, loaded or not, with the requests that hold it. */
    public static final class Entry<H> {

        /** {@link #pins} while an unload is deciding about it: no request may pin it then. */
        static final int RETIRING = -1;

        private final Multiplexer<H> owner;
        final String model;
        final H handle;
        final AtomicInteger pins = new AtomicInteger();
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

        /**
         * {@link Multiplexer#acquire(Entry)} of this entry: pins it for a request about to run, loading it if needed.
         */
        public boolean acquire() {
            return owner.acquire(this);
        }

        /** Takes a pin unless an unload is deciding about the entry; a CAS loop, never blocks. */
        boolean pin() {
            for (;;) {
                int now = pins.get();
                if (now == RETIRING) {
                    return false;
                }
                if (pins.compareAndSet(now, now + 1)) {
                    return true;
                }
            }
        }

        /**
         * Gives back the pin {@link Multiplexer#acquire} took; exactly once per acquire. The last pin's release retries
         * the models waiting for room while some wait (the model released may now be idle); a release that leaves the
         * model held takes no lock.
         */
        public void release() {
            if (pins.decrementAndGet() == 0 && owner != null && owner.waitingCount > 0) {
                owner.retryWaiting(); // only a model no request holds any more can make room, or stop waiting
            }
        }

        /** From no pin to {@link #RETIRING}; false when a request holds it. */
        boolean retire() {
            return pins.compareAndSet(0, RETIRING);
        }

        /** Back from {@link #RETIRING} to no pin. */
        void reinstate() {
            pins.compareAndSet(RETIRING, 0);
        }
    }
}
