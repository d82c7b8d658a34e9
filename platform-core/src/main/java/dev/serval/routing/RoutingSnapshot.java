package dev.serval.routing;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The replicas a deployment routes to, immutable. The controller builds a new one only when the set of
 * routable replicas changes and swaps it into the {@link Router}; request threads read it without locks.
 * Selection ({@link #choose()}) takes no lock and allocates nothing.
 *
 * <p>What the replicas serve is computed once, when the snapshot is built: {@link #newest()} (the replica started
 * last, so of the newest version that serves) and {@link #servesOneModel()} (whether every replica runs the same
 * loaded model, i.e. no rolling update has two versions serving at once).
 */
public final class RoutingSnapshot<I, O> {

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static final RoutingSnapshot<?, ?> EMPTY = new RoutingSnapshot<Object, Object>(new RoutableReplica[0]);

    private final RoutableReplica<I, O>[] replicas;
    private final RoutableReplica<I, O> newest;
    private final boolean oneModel;

    private RoutingSnapshot(RoutableReplica<I, O>[] replicas) {
        this.replicas = replicas;
        RoutableReplica<I, O> last = null;
        for (RoutableReplica<I, O> replica : replicas) {
            if (last == null || replica.id() > last.id()) {
                last = replica;
            }
        }
        boolean same = true;
        for (RoutableReplica<I, O> replica : replicas) {
            same &= replica.model() == last.model();
        }
        this.newest = last;
        this.oneModel = same;
    }

    @SuppressWarnings("unchecked")
    public static <I, O> RoutingSnapshot<I, O> empty() {
        return (RoutingSnapshot<I, O>) EMPTY;
    }

    @SuppressWarnings("unchecked")
    public static <I, O> RoutingSnapshot<I, O> of(List<? extends RoutableReplica<I, O>> replicas) {
        return replicas.isEmpty() ? empty() : new RoutingSnapshot<>(replicas.toArray(new RoutableReplica[0]));
    }

    public int size() {
        return replicas.length;
    }

    public boolean isEmpty() {
        return replicas.length == 0;
    }

    /**
     * The replica started last (the highest id), hence one of the newest version that serves; null when there is
     * none. Replica ids grow with every start, and once a new version is applied only replicas of it start.
     */
    public RoutableReplica<I, O> newest() {
        return newest;
    }

    /** Whether every replica runs one loaded model (vacuously true when there is none). */
    public boolean servesOneModel() {
        return oneModel;
    }

    /** The replicas, in a new list (for status and tests; not for the request path). */
    public List<RoutableReplica<I, O>> replicas() {
        return List.of(replicas);
    }

    /** Requests the replicas work on now (the sum of their in-flight counts, each read once); allocates nothing. */
    public int inFlight() {
        int sum = 0;
        for (RoutableReplica<I, O> replica : replicas) {
            sum += replica.inFlight();
        }
        return sum;
    }

    /**
     * Power of two choices: picks two distinct replicas at random and takes a slot on the one with fewer requests
     * in flight, else on the other.
     *
     * @return the replica whose slot the caller now holds, or null when both were full
     */
    public RoutableReplica<I, O> choose() {
        int n = replicas.length;
        if (n == 0) {
            return null;
        }
        if (n == 1) {
            RoutableReplica<I, O> only = replicas[0];
            return only.tryAcquire() ? only : null;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int i = random.nextInt(n);
        int j = random.nextInt(n - 1);
        if (j >= i) {
            j++;
        }
        RoutableReplica<I, O> a = replicas[i];
        RoutableReplica<I, O> b = replicas[j];
        if (b.inFlight() < a.inFlight()) {
            RoutableReplica<I, O> swap = a;
            a = b;
            b = swap;
        }
        if (a.tryAcquire()) {
            return a;
        }
        return b.tryAcquire() ? b : null;
    }

    /**
     * Takes a slot on any replica that has one, scanning all of them from a random start: used to dispatch queued
     * requests, where missing free capacity would leave a request waiting for nothing.
     *
     * @return the replica whose slot the caller now holds, or null when every replica is full
     */
    public RoutableReplica<I, O> anyWithCapacity() {
        int n = replicas.length;
        if (n == 0) {
            return null;
        }
        int start = n == 1 ? 0 : ThreadLocalRandom.current().nextInt(n);
        for (int k = 0; k < n; k++) {
            RoutableReplica<I, O> replica = replicas[(start + k) % n];
            if (replica.tryAcquire()) {
                return replica;
            }
        }
        return null;
    }
}
