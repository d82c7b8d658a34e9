package dev.serval.multiplex;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Where a model is loaded (a model no replica holds, or one more replica of a model whose replicas are full), and
 * which loaded models make room for it: a pure function of what the replicas hold, so that the rules are tested
 * without threads.
 *
 * <p>The rules. A replica holds at most {@code max_models_per_replica} models and the deployment's models together
 * at most {@code max_model_memory} bytes (0: no bound). The model goes to the replica with the fewest models, ties
 * broken by fewer requests on its models, then by the lower index, among those that do not hold it already; when
 * every such replica is full, to the one whose least recently used idle model is the oldest, which it unloads. While
 * the memory bound is passed, the least recently used idle models of any replica are unloaded too. A model with
 * requests in flight or queued, or still loading, is never unloaded from its last replica ({@link Held#busy}); a
 * model's extra replicas may go (the others take its requests; what runs on the one that goes finishes first). When
 * no choice fits, the model is refused: {@link Refusal#tooLarge} when it alone passes the memory bound (it never
 * fits), otherwise because the models that would have to go are busy (retrying later may succeed).
 */
public final class Placement {

    /**
     * One model on one replica.
     *
     * @param bytes         what unloading it here frees: the model's estimated size on its last replica, 0 on one of
     *                      several (the replicas of a model share its weights)
     * @param lastUsedNanos the model's last request ({@code nanoTime})
     * @param ongoing       requests on this replica of the model (its share), for choosing the least loaded replica
     * @param busy          whether it must stay: the model's last replica while it has requests or loads
     */
    public record Held(String model, int replica, long bytes, long lastUsedNanos, int ongoing, boolean busy) {
    }

    /** What {@link #place} decided. */
    public sealed interface Result permits Decision, Refusal {
    }

    /** Load onto {@code replica} after unloading {@code evict} (least recently used first). */
    public record Decision(int replica, List<Held> evict) implements Result {
    }

    /** Why the model cannot be loaded now; {@code tooLarge} when it never can under the memory bound. */
    public record Refusal(String reason, boolean tooLarge) implements Result {
    }

    private Placement() {
    }

    /**
     * Places a model no replica holds, of {@code bytes}, given what is {@code held} (whose sizes sum to their
     * {@link Held#bytes}).
     */
    public static Result place(String model, long bytes, List<Held> held, int replicas, int maxModelsPerReplica,
            long maxModelMemory) {
        long total = 0;
        for (Held each : held) {
            total += each.bytes();
        }
        return place(model, bytes, held, total, replicas, maxModelsPerReplica, maxModelMemory, new int[0]);
    }

    /**
     * Places a model given what is {@code held}.
     *
     * @param bytes               what loading it adds: its estimated size, or 0 for one more replica of a loaded
     *                            model (its weights are shared)
     * @param totalBytes          what the loaded models take now (each counted once)
     * @param replicas            the deployment's replicas, at least 1
     * @param maxModelsPerReplica models one replica may hold, at least 1
     * @param maxModelMemory      bytes all held models may take, or 0 for no bound
     * @param excluded            replicas that must not take it (those that hold it already)
     * @return a {@link Decision}, or a {@link Refusal}
     */
    public static Result place(String model, long bytes, List<Held> held, long totalBytes, int replicas,
            int maxModelsPerReplica, long maxModelMemory, int[] excluded) {
        if (maxModelMemory > 0 && bytes > maxModelMemory) {
            return new Refusal("model '" + model + "' takes " + bytes + " bytes, more than the deployment's "
                    + "max_model_memory (" + maxModelMemory + " bytes) allows for all its models together", true);
        }
        if (replicas == 0) {
            return new Refusal("the deployment is scaled to zero replicas (the autoscaler starts one for it)", false);
        }
        int[] count = new int[replicas];
        long[] ongoing = new long[replicas];
        Held[] oldestIdle = new Held[replicas];
        long total = totalBytes;
        for (Held each : held) {
            if (each.replica() < 0 || each.replica() >= replicas) {
                continue; // on a replica that is going away: it only counts against memory
            }
            count[each.replica()]++;
            ongoing[each.replica()] += each.ongoing();
            if (!each.busy() && (oldestIdle[each.replica()] == null
                    || each.lastUsedNanos() - oldestIdle[each.replica()].lastUsedNanos() < 0)) {
                oldestIdle[each.replica()] = each;
            }
        }
        int chosen = -1;
        for (int r = 0; r < replicas; r++) {
            if (contains(excluded, r)) {
                continue;
            }
            if (count[r] < maxModelsPerReplica && (chosen < 0 || count[r] < count[chosen]
                    || (count[r] == count[chosen] && ongoing[r] < ongoing[chosen]))) {
                chosen = r;
            }
        }
        List<Held> evict = new ArrayList<>();
        if (chosen < 0) {
            for (int r = 0; r < replicas; r++) {
                if (!contains(excluded, r) && oldestIdle[r] != null && (chosen < 0
                        || oldestIdle[r].lastUsedNanos() - oldestIdle[chosen].lastUsedNanos() < 0)) {
                    chosen = r;
                }
            }
            if (chosen < 0) {
                return new Refusal("every replica " + (excluded.length > 0 ? "that does not hold it " : "")
                        + "holds max_models_per_replica (" + maxModelsPerReplica + ") models and each of them has "
                        + "requests in flight", false);
            }
            evict.add(oldestIdle[chosen]);
            total -= oldestIdle[chosen].bytes();
        }
        if (maxModelMemory > 0 && total + bytes > maxModelMemory) {
            List<Held> idle = new ArrayList<>();
            for (Held each : held) {
                if (!each.busy() && each.bytes() > 0 && !evict.contains(each) && !each.model().equals(model)) {
                    idle.add(each); // only a model's last replica frees its memory
                }
            }
            idle.sort(Comparator.comparingLong(Held::lastUsedNanos)); // nanoTime values of one run: no wrap in practice
            for (int i = 0; i < idle.size() && total + bytes > maxModelMemory; i++) {
                evict.add(idle.get(i));
                total -= idle.get(i).bytes();
            }
            if (total + bytes > maxModelMemory) {
                return new Refusal("model '" + model + "' takes " + bytes + " bytes and the loaded models that have "
                        + "requests in flight take " + total + " of the deployment's max_model_memory ("
                        + maxModelMemory + " bytes)", false);
            }
        }
        return new Decision(chosen, List.copyOf(evict));
    }

    private static boolean contains(int[] replicas, int replica) {
        for (int each : replicas) {
            if (each == replica) {
                return true;
            }
        }
        return false;
    }
}
