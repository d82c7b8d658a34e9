package dev.serval.multiplex;

import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.spec.MultiplexSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Unloads what the bounds no longer allow, after the settings or the replica count shrank ({@link
 * Multiplexer#configure}) and at every refresh, least recently used first: a model's replicas beyond the replica
 * count (its extra replicas at once, its last one when idle), models over {@code max_models_per_replica} on a replica
 * and over {@code max_model_memory} (extra replicas at once, last ones when idle). Busy ones stay until a later
 * refresh finds them idle.
 *
 * <p>Design. No state of its own: {@link #trim} runs under the {@link ModelTable#lock} (the refresher thread, or the
 * thread that reconfigures) and unloads through the {@link Placer}, which retires a model's last replica by CAS so
 * that a model a request holds is never taken. The order by last use reads {@code lastUsed}, which requests write
 * without the lock: best-effort (two requests of the same nanosecond are in either order).
 */
final class Trimmer<H> {

    private final ModelTable<H> table;
    private final Placer<H> placer;

    Trimmer(ModelTable<H> table, Placer<H> placer) {
        this.table = table;
        this.placer = placer;
    }

    /** Under the lock: unloads what the bounds no longer allow (see the class comment). */
    void trim() {
        List<Entry<H>> loaded = new ArrayList<>();
        for (Entry<H> entry : table.models().values()) {
            if (entry.held.length > 0) {
                loaded.add(entry);
            }
        }
        loaded.sort(Comparator.comparingLong(e -> e.lastUsed));
        int replicas = table.replicas();
        MultiplexSpec settings = table.settings();
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
                    placer.unloadFrom(entry, replica);
                } else if (!placer.unloadIfIdle(entry)) {
                    continue;
                }
                if (!outside) {
                    count[replica]--;
                }
            }
        }
        long limit = settings.maxModelMemory();
        long bytes = table.loadedBytes();
        for (Entry<H> entry : loaded) {
            if (limit > 0 && bytes > limit && entry.held.length > 0) {
                long size = entry.bytes;
                if (placer.unloadIfIdle(entry)) {
                    bytes -= size;
                }
            }
        }
    }
}
