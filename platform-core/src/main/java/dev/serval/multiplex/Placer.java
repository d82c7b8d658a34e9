package dev.serval.multiplex;

import dev.serval.error.NotReady;
import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.multiplex.Multiplexer.Hosting;
import dev.serval.multiplex.Multiplexer.Tuning;
import dev.serval.spec.MultiplexSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Loads models onto replicas and takes them off: applies {@link Placement}'s decisions (which replica, what goes to
 * make room) and keeps the models waiting for room.
 *
 * <p>Design. Everything here runs under the {@link ModelTable#lock}, but for reads of {@link #waitingCount} and a
 * load's completion (any thread), which only feeds the {@link Residency}. A pinned model that no replica holds is
 * placed once ({@link #placed}): the first request places it and starts its load, the ones that come while it loads
 * find it placed and wait in its handle's queue, so a model loads once however many requests ask for it at once
 * (single flight); loads never block the caller. An entry's replicas ({@code held}) are written only here, under the
 * lock, and read by requests after they pinned it: a pinned entry that shows a replica keeps at least one until
 * released. A model's last replica goes only with its entry retired by CAS ({@link Entry#retire}), so an unload never
 * takes a model a request holds, and a request never holds a model being unloaded; its extra replicas may go at any
 * time (the others take its requests).
 *
 * <p>Waiting for room. When no room can be made (every model that could go is busy), the model waits in
 * {@link #waiting}, in the order asked for, its requests in its queue (bounded, within their deadlines). The release of
 * a model's last pin retries the waiting models only while some wait ({@link #waitingCount}, a volatile copy of the
 * set's size read without the lock: a flag that gates a rare check; a release that leaves its model held cannot
 * make room and takes no lock); so do the spreader and each refresh, since no release says a residency ended.
 *
 * <p>A model stays on its replica at least its {@link Residency} once loaded: a model's last replica is busy until
 * then, and is not unloaded to make room.
 */
final class Placer<H> {

    /** The multiplexer's log category: one for everything a multiplexed deployment's models go through. */
    private static final System.Logger LOG = System.getLogger(Multiplexer.class.getName());

    private final ModelTable<H> table;
    private final Hosting<H> hosting;
    private final LongSupplier nanoTime;
    private final MultiplexMeters meters;
    private final Residency residency;
    /**
     * Models asked for while no room could be made for them (every model that could have gone had requests), in the
     * order they were asked for; their requests wait in their own queues. Guarded by the lock.
     */
    private final LinkedHashSet<Entry<H>> waiting = new LinkedHashSet<>();
    /**
     * {@code waiting.size()}, written under the lock and read without it by every {@link Entry#release}: a release
     * takes the lock to retry the waiting models only while some wait (a flag that gates a rare check).
     */
    private volatile int waitingCount;

    Placer(ModelTable<H> table, Tuning tuning, LongSupplier nanoTime, MultiplexMeters meters) {
        this.table = table;
        this.hosting = table.hosting();
        this.nanoTime = nanoTime;
        this.meters = meters;
        this.residency = new Residency(tuning, meters.loadTime);
    }

    /** How many models wait for room; read without the lock. */
    int waitingCount() {
        return waitingCount;
    }

    /** Whether {@code entry} waits for room. */
    boolean waits(Entry<H> entry) {
        synchronized (table.lock) {
            return waiting.contains(entry);
        }
    }

    /**
     * A pinned entry that no replica held when it was pinned: placed (loaded) unless another request did it, or
     * waiting for room. Gives the pin back when it throws.
     *
     * @throws NotReady when the model alone is larger than {@code max_model_memory}, or the deployment is closed
     */
    void placed(Entry<H> entry) {
        synchronized (table.lock) {
            if (entry.held.length > 0) {
                return;
            }
            if (table.closed()) {
                entry.release();
                throw table.shuttingDown();
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
    }

    /**
     * Under the lock: every model on every replica, as {@link Placement} sees them, with their entries. A model's last
     * replica is busy while requests hold it, run on it or wait for it, and for its residency after it loaded.
     */
    private Map<Placement.Held, Entry<H>> rows() {
        Map<Placement.Held, Entry<H>> rows = new LinkedHashMap<>();
        long now = nanoTime.getAsLong();
        long stay = residency.nanos();
        for (Entry<H> entry : table.models().values()) {
            int[] held = entry.held;
            if (held.length == 0) {
                continue;
            }
            int ongoing = hosting.ongoing(entry.handle);
            boolean busy = held.length == 1 && (entry.pins.get() != 0 || ongoing > 0
                    || now - entry.loadedAt < stay);
            for (int replica : held) {
                rows.put(new Placement.Held(entry.model, replica, held.length == 1 ? entry.bytes : 0, entry.lastUsed,
                        ongoing / held.length, busy), entry);
            }
        }
        return rows;
    }

    /**
     * Under the lock: loads {@code entry} onto one more replica (its first, or one more of a hot model), unloading
     * what makes room; false when every model that could make room is busy.
     *
     * @param bytes what it adds: its size for its first replica, 0 for one more (its weights are shared)
     * @throws NotReady when the model alone is larger than {@code max_model_memory}
     */
    boolean tryPlace(Entry<H> entry, long bytes) {
        for (int attempt = 0; ; attempt++) {
            Map<Placement.Held, Entry<H>> rows = rows();
            MultiplexSpec settings = table.settings();
            Placement.Result result = Placement.place(entry.model, bytes, List.copyOf(rows.keySet()),
                    table.loadedBytes(), table.replicas(), settings.maxModelsPerReplica(), settings.maxModelMemory(),
                    entry.held);
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
            load(entry, decision.replica());
            return true;
        }
    }

    /** Under the lock: adds {@code replica} to {@code entry}'s and starts the load; a first load is timed. */
    private void load(Entry<H> entry, int replica) {
        boolean first = entry.held.length == 0;
        entry.held = with(entry.held, replica);
        long started = nanoTime.getAsLong();
        if (first) {
            entry.loadedAt = started;
        }
        meters.loads.increment();
        CompletableFuture<Void> serving = hosting.replicas(entry.handle, entry.held.length);
        if (first) {
            serving.whenComplete((served, failure) -> {
                if (failure == null) {
                    residency.loaded(nanoTime.getAsLong() - started);
                }
            });
        }
    }

    /**
     * Under the lock: takes {@code entry} off {@code replica}. Its last replica only with the entry retired by the
     * caller (no request holds it), and only if idle when called otherwise ({@link #unloadIfIdle}).
     */
    void unloadFrom(Entry<H> entry, int replica) {
        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': unloading model ''{1}'' from replica {2}",
                table.deployment(), entry.model, replica);
        entry.held = without(entry.held, replica);
        entry.calmSince = 0;
        hosting.replicas(entry.handle, entry.held.length);
        meters.evictions.increment();
    }

    /**
     * Under the lock: a retired model that left the repository, taken off its replicas without an unload (closing its
     * handle frees them); counts one eviction if it was loaded.
     */
    void forget(Entry<H> entry) {
        if (entry.held.length > 0) {
            meters.evictions.increment();
        }
        entry.held = Entry.NONE;
    }

    /** Under the lock: unloads {@code entry} from its last replica if no request holds it; whether it did. */
    boolean unloadIfIdle(Entry<H> entry) {
        int[] held = entry.held;
        if (held.length == 0 || hosting.ongoing(entry.handle) > 0 || !entry.retire()) {
            return false;
        }
        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': unloading model ''{1}'' from replica(s) {2}",
                table.deployment(), entry.model, Arrays.toString(held));
        entry.held = Entry.NONE;
        entry.calmSince = 0;
        hosting.replicas(entry.handle, 0);
        meters.evictions.increment(held.length);
        entry.reinstate();
        return true;
    }

    /**
     * Places the models waiting for room, in the order they were asked for, while room can be made; drops those whose
     * requests all ended (nothing waits for them any more). After a release while some wait, at each refresh, and
     * from the spreader.
     */
    void retryWaiting() {
        synchronized (table.lock) {
            for (Iterator<Entry<H>> each = waiting.iterator(); each.hasNext(); ) {
                Entry<H> entry = each.next();
                if (entry.held.length > 0 || (entry.pins.get() <= 0 && hosting.ongoing(entry.handle) == 0)
                        || !table.models().containsKey(entry.model)) {
                    each.remove();
                    continue;
                }
                boolean placed;
                try {
                    placed = !table.closed() && tryPlace(entry, entry.bytes);
                } catch (RuntimeException e) {
                    placed = true; // cannot ever fit (the bound shrank): its requests wait out their deadlines
                    LOG.log(System.Logger.Level.WARNING, "deployment ''{0}'': model ''{1}'' cannot load: {2}",
                            table.deployment(), entry.model, e.getMessage());
                }
                if (!placed) {
                    break; // no room for the first: the order is kept
                }
                each.remove();
            }
            waitingCount = waiting.size();
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
}
