package dev.serval.multiplex;

import dev.serval.error.NotReady;
import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.multiplex.Multiplexer.Hosting;
import dev.serval.multiplex.Multiplexer.ReplicaModels;
import dev.serval.spec.MultiplexSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The entries of one multiplexed deployment (one per model asked for, loaded or not), the last scan of the
 * repository, and the bounds the loads keep to (the replica count and the multiplexing settings).
 *
 * <p>Design. {@link #models} is an immutable map from model name to {@link Entry}, replaced whole under the lock when
 * a model is first asked for ({@link #created}) or leaves the repository ({@link Refresher}); request threads read it
 * once per request and never lock. An entry lives as long as its model matches: unloading a model takes its replicas
 * away and keeps the entry, so that a request racing an unload finds the same handle. {@link #candidates} is the
 * last scan, written by the refresher thread and read by requests for names not yet in {@link #models}: which names
 * exist is known only from it, so a request never touches the file system.
 *
 * <p>The lock is the {@link Multiplexer}'s monitor ({@link #lock}): every change of which model is where (the map's
 * replacement, an entry's replicas, the bounds, the models waiting for room) happens under it, taken by the request
 * path only for a model no replica holds, and by the {@link Placer}, {@link Spreader}, {@link Trimmer} and
 * {@link Refresher}; the edge holds it too while it changes every model's settings. The hosting's {@code create},
 * {@code bound}, {@code replicas} and {@code update} are called under it; its {@code close} (which blocks) and the
 * load figures that status and the autoscaler read are not. The bounds are written under it ({@link #bound});
 * {@link #replicas} is read without it by status, {@link #settings} only under it. {@link #closed} is written once,
 * under it, and read without it to refuse new work.
 */
final class ModelTable<H> {

    private final Multiplexer<H> owner;
    /** The one lock of the deployment's multiplexing: the {@link Multiplexer} itself. */
    final Object lock;
    private final String deployment;
    private final Hosting<H> hosting;
    private final AtomicReference<Map<String, Entry<H>>> models = new AtomicReference<>(Map.of());
    /** The last scan: written by the refresher thread, read by requests for names not yet in {@link #models}. */
    private volatile Map<String, Candidate> candidates;
    /** The replica count; written under the lock ({@link #bound}), read by status without it. */
    private volatile int replicas;
    /** Written under the lock ({@link #bound}), read under it. */
    private MultiplexSpec settings;
    private volatile boolean closed;

    ModelTable(Multiplexer<H> owner, String deployment, Hosting<H> hosting, Map<String, Candidate> scanned,
            int replicas, MultiplexSpec settings) {
        this.owner = owner;
        this.lock = owner;
        this.deployment = deployment;
        this.hosting = hosting;
        this.candidates = Map.copyOf(scanned);
        this.replicas = Math.max(0, replicas);
        this.settings = settings;
    }

    /** The entries now: an immutable map, read without the lock. */
    Map<String, Entry<H>> models() {
        return models.get();
    }

    /** Under the lock: makes {@code next} the entries (a model left the repository). */
    void models(Map<String, Entry<H>> next) {
        models.set(Map.copyOf(next));
    }

    /**
     * The entry of {@code model}, neither pinned nor loaded, created on the first look; null when the last scan saw
     * no such model: nothing is created.
     *
     * @throws NotReady when the deployment is closed
     */
    Entry<H> entry(String model) {
        Entry<H> entry = models.get().get(model);
        if (entry != null) {
            return entry;
        }
        return candidates.containsKey(model) ? created(model) : null;
    }

    /** The lock's way: the entry of a model the last scan saw, created if needed; null if it has gone since. */
    private Entry<H> created(String model) {
        synchronized (lock) {
            if (closed) {
                throw shuttingDown();
            }
            Entry<H> entry = models.get().get(model);
            if (entry == null) {
                Candidate candidate = candidates.get(model);
                if (candidate == null) {
                    return null;
                }
                entry = new Entry<>(owner, model, hosting.create(model, candidate.version()), candidate);
                hosting.bound(entry.handle, entry);
                Map<String, Entry<H>> next = new HashMap<>(models.get());
                next.put(model, entry);
                models.set(Map.copyOf(next));
            }
            return entry;
        }
    }

    /** What serves each model: the handles' creator and driver. */
    Hosting<H> hosting() {
        return hosting;
    }

    /** The deployment's name, for messages. */
    String deployment() {
        return deployment;
    }

    /** The refusal of a closed deployment. */
    NotReady shuttingDown() {
        return new NotReady("deployment '" + deployment + "' is shutting down");
    }

    /** The matching models of the last scan, by name. */
    Map<String, Candidate> candidates() {
        return candidates;
    }

    /** Refresher thread: the matching models of a new scan. */
    void candidates(Map<String, Candidate> scanned) {
        candidates = scanned;
    }

    int replicas() {
        return replicas;
    }

    /** Under the lock. */
    MultiplexSpec settings() {
        return settings;
    }

    /** Under the lock: new bounds for the next loads. */
    void bound(int replicas, MultiplexSpec settings) {
        this.replicas = Math.max(0, replicas);
        this.settings = settings;
    }

    boolean closed() {
        return closed;
    }

    /** Under the lock, once: closes the table and hands back every entry; null when it was closed already. */
    List<Entry<H>> close() {
        if (closed) {
            return null;
        }
        closed = true;
        List<Entry<H>> all = new ArrayList<>(models.get().values());
        models.set(Map.of());
        return all;
    }

    /** Under the lock: what the loaded models take, each counted once. */
    long loadedBytes() {
        long total = 0;
        for (Entry<H> entry : models.get().values()) {
            if (entry.held.length > 0) {
                total += entry.bytes;
            }
        }
        return total;
    }

    /** Models loaded now, summed over replicas (the {@code serval_multiplex_models_loaded} gauge). */
    int loadedCount() {
        int loaded = 0;
        for (Entry<H> entry : models.get().values()) {
            loaded += entry.held.length;
        }
        return loaded;
    }

    /** Requests running on or waiting for the deployment's models: the sum over its models. */
    int ongoingRequests() {
        int ongoing = 0;
        for (Entry<H> entry : models.get().values()) {
            ongoing += hosting.ongoing(entry.handle);
        }
        return ongoing;
    }

    /** Under the lock: what each replica holds, most recently used first; every replica listed, empty ones too. */
    List<ReplicaModels> replicaModels() {
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
}
