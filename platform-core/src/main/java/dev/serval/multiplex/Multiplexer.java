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
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
 * model with one replica while it is loaded and none while it is not).
 *
 * <p>Design. {@link #models} is an immutable map from model name to {@link Entry}, replaced whole under this object's
 * lock when a model is first asked for or leaves the repository; request threads read it once per request. An
 * entry lives as long as its model matches: unloading a model takes its replica away and keeps the entry, so that a
 * request racing an unload finds the same handle. Each entry has
 * <ul>
 *   <li>{@code pins}: requests holding it, taken by CAS on the request path ({@link #acquire}) and given back by
 *       {@link Entry#release}. An unload moves it from 0 to {@link Entry#RETIRING} by CAS and back once the entry is
 *       marked unloaded, so it never unloads a model a request holds, and a request never holds a model while it is
 *       being unloaded;</li>
 *   <li>{@code replica}: the replica that holds it, or -1; written under the lock, read by requests after they pinned
 *       the entry (a pinned entry that shows a replica keeps it until released);</li>
 *   <li>{@code lastUsed}: written by every request that pins it, read when choosing what to unload: best-effort (the
 *       order of two requests of the same nanosecond is either).</li>
 * </ul>
 * A request for a loaded model costs one map read, one CAS, one volatile read and one write, and allocates nothing.
 * A request for a model that no replica holds takes the lock: the first one places the model ({@link Placement}) and
 * starts its load; the ones that come while it loads find it placed and wait in its handle's queue, so a model
 * loads once however many requests ask for it at once (single flight). Loads never block the caller.
 *
 * <p>The refresher thread rescans the repository every {@code refreshPeriod} ({@link Catalog}): a model whose
 * newest version changed rolls to it ({@link Hosting#update}); a model that left the repository is closed once no
 * request holds it; a model whose load failed is unloaded once no request holds it (the next request loads it
 * again); models over the bounds (after the settings or the replica count shrank) are unloaded when idle. Which
 * names exist is known only from the last scan: a request for a name the scan did not see is refused at once,
 * without touching the file system on the request path.
 */
public final class Multiplexer<H> implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Multiplexer.class.getName());

    /** How the multiplexer drives what serves one model. */
    public interface Hosting<H> {

        /** The handle of {@code model} at {@code version}, serving nothing yet; under the lock: must not block. */
        H create(String model, String version);

        /**
         * Gives the model its replica: its load begins, and requests waiting in its queue are served once it serves.
         * Never blocks.
         *
         * @return completed when it serves, exceptionally when its load fails
         */
        CompletableFuture<Void> load(H handle);

        /** Takes the model's replica away: it stops once its requests finished, and its memory is freed. Never blocks. */
        void unload(H handle);

        /** Rolls the model to {@code version} (a rolling update: it keeps serving). Never blocks. */
        void update(H handle, String version);

        /** Requests running on the model's replica or waiting in its queue now. */
        int ongoing(H handle);

        /** Whether the model's load failed (it serves nothing and refuses requests with the reason). */
        boolean failed(H handle);

        /** Closes the handle for good, draining its requests; blocks (refresher thread, or {@link #close}). */
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
    /** Written under the lock ({@link #configure}), read under it. */
    private int replicas;
    private MultiplexSpec settings;
    private volatile boolean closed;

    /**
     * Scans the catalog once (so that the first requests find their models) and starts the refresher.
     *
     * @param refreshPeriod how often the catalog is rescanned
     */
    public Multiplexer(String deployment, int replicas, MultiplexSpec settings, Hosting<H> hosting, Catalog catalog,
            Duration refreshPeriod, LongSupplier nanoTime, MeterRegistry registry) {
        this.deployment = deployment;
        this.hosting = hosting;
        this.catalog = catalog;
        this.nanoTime = nanoTime;
        this.replicas = Math.max(1, replicas);
        this.settings = settings;
        this.registry = registry;
        this.candidates = Map.copyOf(catalog.scan());
        this.loads = Counter.builder("serval.multiplex.loads").tag("deployment", deployment)
                .description("Models a multiplexed deployment loaded on demand").register(registry);
        this.evictions = Counter.builder("serval.multiplex.evictions").tag("deployment", deployment)
                .description("Models a multiplexed deployment unloaded to make room, or because they left the "
                        + "repository").register(registry);
        this.loadTime = Timer.builder("serval.multiplex.load").tag("deployment", deployment)
                .description("From the request that asked for an unloaded model to its model serving")
                .register(registry);
        this.loadedGauge = Gauge.builder("serval.multiplex.models.loaded", this, Multiplexer::loadedCount)
                .tag("deployment", deployment).description("Models the replicas of a multiplexed deployment hold, "
                        + "summed over its replicas").register(registry);
        this.refresher = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("serval-multiplex-" + deployment).daemon(true).factory());
        long every = refreshPeriod.toNanos();
        refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.NANOSECONDS);
    }

    /**
     * The entry of {@code model}, pinned (the caller must {@link Entry#release} it once its request ended), its load
     * started if no replica holds it; null when the deployment's glob matches no repository model of that name (as
     * of the last scan). Never blocks on a load. When no room can be made for the model now (every model that could
     * be unloaded has requests), it waits for room: its requests wait in its queue (bounded, within their
     * deadlines) and it loads as soon as a release leaves a model idle.
     *
     * @throws NotReady when the model alone is larger than {@code max_model_memory}, or the deployment is closed
     */
    public Entry<H> acquire(String model) {
        Entry<H> entry = models.get().get(model);
        if (entry != null && entry.pin()) {
            entry.lastUsed = nanoTime.getAsLong();
            if (entry.replica >= 0) {
                return entry;
            }
            return placed(entry);
        }
        return candidates.containsKey(model) ? slowAcquire(model) : null;
    }

    /** The lock's way: the entry created if needed, pinned, and placed. */
    private synchronized Entry<H> slowAcquire(String model) {
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
            Map<String, Entry<H>> next = new HashMap<>(models.get());
            next.put(model, entry);
            models.set(Map.copyOf(next));
        }
        if (!entry.pin()) {
            return null; // it left the repository a moment ago: as unknown as if the scan had not seen it
        }
        entry.lastUsed = nanoTime.getAsLong();
        return placed(entry);
    }

    /** A pinned entry that no replica held when it was pinned: placed (loaded) unless another request did it. */
    private synchronized Entry<H> placed(Entry<H> entry) {
        if (entry.replica >= 0) {
            return entry;
        }
        try {
            place(entry);
        } catch (RuntimeException e) {
            entry.release();
            throw e;
        }
        return entry;
    }

    /**
     * Gives back the pin a request took on {@code model} with {@link #acquire} (as {@link Entry#release} does): a
     * pinned entry is never removed, so the name finds it.
     */
    public void releasePin(String model) {
        Entry<H> entry = models.get().get(model);
        if (entry != null) {
            entry.release();
        }
    }

    /**
     * Under the lock: chooses a replica for {@code entry}, unloads what makes room, and starts its load; or, when
     * every model that could make room is busy, adds it to the models waiting for room.
     */
    private void place(Entry<H> entry) {
        if (closed) {
            throw new NotReady("deployment '" + deployment + "' is shutting down");
        }
        if (!tryPlace(entry)) {
            waiting.add(entry);
            waitingCount = waiting.size();
        }
    }

    /**
     * Under the lock: places {@code entry} and starts its load; false when every model that could make room is busy.
     *
     * @throws NotReady when the model alone is larger than {@code max_model_memory}
     */
    private boolean tryPlace(Entry<H> entry) {
        for (int attempt = 0; ; attempt++) {
            List<Placement.Held> held = new ArrayList<>();
            Map<Placement.Held, Entry<H>> byHeld = new HashMap<>();
            for (Entry<H> other : models.get().values()) {
                if (other.replica >= 0) {
                    Placement.Held h = other.held(hosting);
                    held.add(h);
                    byHeld.put(h, other);
                }
            }
            Placement.Result result = Placement.place(entry.model, entry.bytes, held, replicas,
                    settings.maxModelsPerReplica(), settings.maxModelMemory());
            if (result instanceof Placement.Refusal refusal) {
                if (refusal.tooLarge()) {
                    throw new NotReady(refusal.reason());
                }
                return false;
            }
            Placement.Decision decision = (Placement.Decision) result;
            List<Entry<H>> victims = new ArrayList<>();
            boolean allRetired = true;
            for (Placement.Held h : decision.evict()) {
                Entry<H> victim = byHeld.get(h);
                if (victim.retire()) {
                    victims.add(victim);
                } else {
                    allRetired = false; // a request pinned it since it was read: it is busy after all
                    break;
                }
            }
            if (!allRetired) {
                victims.forEach(Entry::reinstate);
                if (attempt < 3) {
                    continue;
                }
                return false; // the models that would make room keep getting requests
            }
            for (Entry<H> victim : victims) {
                unloadRetired(victim);
            }
            entry.replica = decision.replica();
            long started = nanoTime.getAsLong();
            loads.increment();
            hosting.load(entry.handle).whenComplete((served, failure) -> {
                if (failure == null) {
                    loadTime.record(nanoTime.getAsLong() - started, TimeUnit.NANOSECONDS);
                }
            });
            return true;
        }
    }

    /**
     * Places the models waiting for room, in the order they were asked for, while room can be made; drops those whose
     * requests all ended (nothing waits for them any more). After a release while some wait, and at each refresh.
     */
    private synchronized void retryWaiting() {
        for (java.util.Iterator<Entry<H>> each = waiting.iterator(); each.hasNext(); ) {
            Entry<H> entry = each.next();
            if (entry.replica >= 0 || (entry.pins.get() <= 0 && hosting.ongoing(entry.handle) == 0)
                    || !models.get().containsKey(entry.model)) {
                each.remove();
                continue;
            }
            boolean placed;
            try {
                placed = !closed && tryPlace(entry);
            } catch (RuntimeException e) {
                placed = true; // cannot ever fit (the bound shrank): its requests wait out their deadlines
                LOG.log(System.Logger.Level.WARNING, "deployment ''{0}'': model ''{1}'' cannot load: {2}", deployment,
                        entry.model, e.getMessage());
            }
            if (!placed) {
                break; // no room for the first: none for the later ones either, but for smaller ones; keep the order
            }
            each.remove();
        }
        waitingCount = waiting.size();
    }

    /** Under the lock, with {@code victim} retired by the caller: takes its replica away, then lets requests pin it. */
    private void unloadRetired(Entry<H> victim) {
        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': unloading model ''{1}'' from replica {2}", deployment,
                victim.model, victim.replica);
        victim.replica = -1;
        hosting.unload(victim.handle);
        evictions.increment();
        victim.reinstate();
    }

    /** Under the lock: unloads {@code entry} if no request holds it; whether it did. */
    private boolean unloadIfIdle(Entry<H> entry) {
        if (entry.replica < 0 || hosting.ongoing(entry.handle) > 0 || !entry.retire()) {
            return false;
        }
        unloadRetired(entry);
        return true;
    }

    /**
     * Takes new settings and a new replica count: they bound the next loads at once, and models over them are
     * unloaded as they become idle (by the refresher).
     */
    public synchronized void configure(int replicas, MultiplexSpec settings) {
        this.replicas = Math.max(1, replicas);
        this.settings = settings;
        trim();
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
                            entry.replica = -1;
                            next.remove(entry.model);
                            gone.add(entry); // stays RETIRING: no request pins it again
                        }
                    } else if (!candidate.version().equals(entry.version)) {
                        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' rolls from version {2}"
                                + " to {3}", deployment, entry.model, entry.version, candidate.version());
                        entry.version = candidate.version();
                        entry.bytes = candidate.bytes();
                        hosting.update(entry.handle, candidate.version());
                    } else if (entry.replica >= 0 && hosting.failed(entry.handle)) {
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
                hosting.close(entry.handle);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "deployment '" + deployment + "': refreshing the models failed; "
                    + "trying again next period", e);
        }
    }

    /**
     * Under the lock: unloads idle models that the bounds no longer allow (a replica beyond the count, more models on
     * a replica than {@code max_models_per_replica}, more bytes than {@code max_model_memory}), least recently used
     * first. Busy ones stay until a later refresh finds them idle.
     */
    private void trim() {
        List<Entry<H>> loaded = new ArrayList<>();
        for (Entry<H> entry : models.get().values()) {
            if (entry.replica >= 0) {
                loaded.add(entry);
            }
        }
        loaded.sort(Comparator.comparingLong(e -> e.lastUsed));
        int[] count = new int[replicas];
        long bytes = 0;
        for (Entry<H> entry : loaded) {
            if (entry.replica < replicas) {
                count[entry.replica]++;
            }
            bytes += entry.bytes;
        }
        long limit = settings.maxModelMemory();
        for (Entry<H> entry : loaded) {
            int replica = entry.replica;
            boolean outside = replica >= replicas;
            boolean crowded = !outside && count[replica] > settings.maxModelsPerReplica();
            boolean heavy = limit > 0 && bytes > limit;
            if ((outside || crowded || heavy) && unloadIfIdle(entry)) {
                if (!outside) {
                    count[replica]--;
                }
                bytes -= entry.bytes;
            }
        }
    }

    /** Models loaded now, summed over replicas (the {@code serval_multiplex_models_loaded} gauge). */
    public int loadedCount() {
        int loaded = 0;
        for (Entry<H> entry : models.get().values()) {
            if (entry.replica >= 0) {
                loaded++;
            }
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

    /** What each replica holds, most recently used first; every replica listed, empty ones too. */
    public synchronized List<ReplicaModels> replicaModels() {
        List<List<Entry<H>>> held = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            held.add(new ArrayList<>());
        }
        for (Entry<H> entry : models.get().values()) {
            int replica = entry.replica;
            if (replica >= 0) {
                while (held.size() <= replica) {
                    held.add(new ArrayList<>()); // a replica beyond the count, still holding a busy model
                }
                held.get(replica).add(entry);
            }
        }
        List<ReplicaModels> view = new ArrayList<>();
        for (int r = 0; r < held.size(); r++) {
            held.get(r).sort(Comparator.comparingLong((Entry<H> e) -> e.lastUsed).reversed());
            view.add(new ReplicaModels(r, held.get(r).stream().map(e -> e.model).toList()));
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

    /** The replica that holds {@code model} now, or -1 (not loaded, or never asked for). */
    public int replicaOf(String model) {
        Entry<H> entry = models.get().get(model);
        return entry == null ? -1 : entry.replica;
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
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(models.get().values());
            models.set(Map.of());
        }
        refresher.shutdownNow();
        all.parallelStream().forEach(entry -> hosting.close(entry.handle));
        for (Meter meter : List.<Meter>of(loads, evictions, loadTime, loadedGauge)) {
            registry.remove(meter);
        }
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
        /** The replica that holds it, or -1. */
        volatile int replica = -1;
        volatile long lastUsed;

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
         * Gives back the pin {@link Multiplexer#acquire} took; exactly once per acquire. While models wait for room,
         * it retries them (the model released may now be idle).
         */
        public void release() {
            pins.decrementAndGet();
            if (owner != null && owner.waitingCount > 0) {
                owner.retryWaiting();
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

        /** As {@link Placement} sees it: busy while requests hold it, run on it or wait for it, or it loads. */
        Placement.Held held(Hosting<H> hosting) {
            int ongoing = hosting.ongoing(handle);
            return new Placement.Held(model, replica, bytes, lastUsed, ongoing, pins.get() != 0 || ongoing > 0);
        }
    }
}
