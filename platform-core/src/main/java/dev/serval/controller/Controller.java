package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import dev.serval.replica.ReplicaState;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The one writer of replica state and routing snapshots: a serialised reconciler over all deployments.
 *
 * <p>Design. <b>Controller thread only</b>: every public method must be called on one thread (the
 * {@link ControllerLoop} in production, the test thread in tests); nothing here is synchronised. Replica reports
 * arrive through {@link ReplicaEvents} from other threads and are handed to {@code events} (the loop's queue),
 * which runs them here, on the deployment object that started the replica (never looked up by name: the name may
 * meanwhile belong to a new deployment).
 *
 * <p>Names and removal: {@code byName} maps a name to the deployment that currently holds it; {@code deployments}
 * holds every deployment still managed, including removed ones whose replicas are still stopping. Re-creating a name
 * that is being removed detaches the removed deployment from the name (it finishes stopping on its own and is then
 * forgotten) and creates a new one at once, so a delete followed by a create never depends on how long the old
 * replicas take to stop or their models to load.
 *
 * <p>Each deployment keeps its replicas in four insertion-ordered buckets keyed by id: {@code starting} and
 * {@code running} (the current version), {@code outdated} (another version, still starting or serving) and
 * {@code leaving} (STOPPING or RECOVERING). A replica is in exactly one bucket, so the counts that reconciliation
 * needs are bucket sizes, and finding or moving a replica is O(1). Records are immutable and replaced only when
 * their state changes.
 *
 * <p>Cost rules, from production lessons (Ray Serve rebuilt every replica record on every tick; Pekko gates a
 * rare check behind a flag): an event or a spec change sets {@code dirty}; {@link #tick()} skips a deployment that
 * is not dirty and has no start deferred by back-off, so a tick with nothing to do reads two fields per deployment
 * and allocates nothing. Stopping k replicas touches those k records (and counts stay O(1) per report). A new
 * {@link RoutingSnapshot} is built and published only when the set of routable replicas changed; building it copies
 * the deployment's routable replicas into a new array, O(n) once per change (the price of lock-free reads).
 */
public final class Controller {

    private static final System.Logger LOG = System.getLogger(Controller.class.getName());
    private static final long MAX_BACKOFF_NANOS = Duration.ofMinutes(1).toNanos();
    private static final long FIRST_BACKOFF_NANOS = Duration.ofSeconds(1).toNanos();

    private final LongSupplier nanoTime;
    private final Executor events;
    private final Map<String, Managed<?, ?>> byName = new HashMap<>();
    private final ArrayList<Managed<?, ?>> deployments = new ArrayList<>();

    /**
     * @param nanoTime the clock (back-off of failed starts)
     * @param events   runs replica reports on the controller thread (the loop's queue; {@code Runnable::run} in
     *                 tests that call from the controller thread)
     */
    public Controller(LongSupplier nanoTime, Executor events) {
        this.nanoTime = nanoTime;
        this.events = events;
    }

    /**
     * Creates the deployment, or changes its desired state. A change of model, version, threads or admission
     * limits rolls the replicas over: new replicas start, old ones keep serving (UPDATING) until the new ones run.
     *
     * @param onStatus receives a new {@link DeploymentStatus} whenever the deployment's replicas change
     */
    public <I, O> void apply(DeploymentSpec spec, ReplicaLauncher<I, O> launcher, Router<I, O> router,
            Consumer<DeploymentStatus> onStatus) {
        @SuppressWarnings("unchecked")
        Managed<I, O> managed = (Managed<I, O>) byName.get(spec.name());
        if (managed != null && managed.removed) {
            // A new deployment under the name of one still stopping: the old one stops on its own, detached.
            byName.remove(spec.name());
            Managed<I, O> created = new Managed<>(spec, launcher, router, onStatus);
            created.nextId = managed.nextId; // replica ids (and their meters) stay unique under the name
            managed = created;
            byName.put(spec.name(), managed);
            deployments.add(managed);
        } else if (managed == null) {
            managed = new Managed<>(spec, launcher, router, onStatus);
            byName.put(spec.name(), managed);
            deployments.add(managed);
        } else {
            if (!managed.spec.sameReplicaShape(spec)) {
                managed.retireCurrentReplicas();
            } else if (!managed.spec.equals(spec)) {
                for (RoutableReplica<I, O> replica : managed.routable.values()) {
                    replica.tune(spec); // batch size and wait change in place, O(n) once per such change
                }
            }
            managed.spec = spec;
            router.maxQueuedRequests(spec.admission().maxQueuedRequests());
        }
        managed.dirty = true;
    }

    /**
     * Stops every replica of the deployment; when the last has stopped, closes its router (failing queued
     * requests) and forgets it, then runs {@code onRemoved}. The name is free for {@link #apply} at once.
     */
    public void remove(String name, Runnable onRemoved) {
        Managed<?, ?> managed = byName.get(name);
        if (managed == null) {
            onRemoved.run();
            return;
        }
        managed.removed = true;
        managed.onRemoved.add(onRemoved);
        managed.dirty = true;
    }

    /** Reconciles every deployment that needs it and applies the plans. Allocates nothing when none does. */
    public void tick() {
        long now = nanoTime.getAsLong();
        for (int i = 0; i < deployments.size(); i++) {
            Managed<?, ?> managed = deployments.get(i);
            if (!managed.dirty && !(managed.deferred && now >= managed.nextStartNanos)) {
                continue;
            }
            ReconcilePlan plan = managed.reconcile(now);
            if (!plan.isNoChange()) {
                managed.apply(plan);
            }
            managed.afterChange();
            if (managed.removed && managed.isEmpty()) {
                forget(managed);
                i--;
            }
        }
    }

    /**
     * What reconciling {@code name} now would do, without applying it (tests and diagnostics). Like
     * {@link #tick()}, it returns {@link ReconcilePlan#noChange()} for a deployment that needs no work.
     */
    public ReconcilePlan reconcile(String name) {
        Managed<?, ?> managed = require(name);
        boolean dirty = managed.dirty;
        boolean deferred = managed.deferred;
        long now = nanoTime.getAsLong();
        if (!dirty && !(deferred && now >= managed.nextStartNanos)) {
            return ReconcilePlan.noChange();
        }
        ReconcilePlan plan = managed.reconcile(now);
        managed.dirty = dirty;
        managed.deferred = deferred;
        return plan;
    }

    /** The deployment's replicas, oldest first within each bucket (status and tests; allocates). */
    public List<ReplicaRecord> replicas(String name) {
        Managed<?, ?> managed = byName.get(name);
        if (managed == null) {
            return List.of();
        }
        List<ReplicaRecord> all = new ArrayList<>(managed.size());
        all.addAll(managed.starting.values());
        all.addAll(managed.running.values());
        all.addAll(managed.outdated.values());
        all.addAll(managed.leaving.values());
        return all;
    }

    /** Whether the controller still manages {@code name}. */
    public boolean manages(String name) {
        return byName.containsKey(name);
    }

    /**
     * Replaces every routable replica of {@code name} (the failure monitor's first remedy): each goes RECOVERING,
     * leaves the routable set at once, drains what it admitted, and a replacement starts on the next tick.
     *
     * @return how many replicas were replaced
     */
    public int replaceAll(String name, String reason) {
        Managed<?, ?> managed = byName.get(name);
        if (managed == null || managed.removed) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long[] ids = managed.routable.keySet().stream().mapToLong(Long::longValue).toArray();
        for (long id : ids) {
            managed.onFailed(id, reason, now);
        }
        managed.afterChange();
        return ids.length;
    }

    private Managed<?, ?> require(String name) {
        Managed<?, ?> managed = byName.get(name);
        if (managed == null) {
            throw new IllegalArgumentException("no deployment '" + name + "'");
        }
        return managed;
    }

    private void forget(Managed<?, ?> managed) {
        byName.remove(managed.spec.name(), managed); // the name may already belong to a new deployment
        deployments.remove(managed);
        managed.forgotten = true;
        managed.router.close();
        for (Runnable callback : managed.onRemoved) {
            callback.run();
        }
    }

    /** One deployment's state. Controller thread only, like everything here. */
    private final class Managed<I, O> implements ReplicaEvents<I, O> {
        private DeploymentSpec spec;
        private final ReplicaLauncher<I, O> launcher;
        private final Router<I, O> router;
        private final Consumer<DeploymentStatus> onStatus;
        private final List<Runnable> onRemoved = new ArrayList<>(1);
        private final LinkedHashMap<Long, ReplicaRecord> starting = new LinkedHashMap<>();
        private final LinkedHashMap<Long, ReplicaRecord> running = new LinkedHashMap<>();
        private final LinkedHashMap<Long, ReplicaRecord> outdated = new LinkedHashMap<>();
        private final LinkedHashMap<Long, ReplicaRecord> leaving = new LinkedHashMap<>();
        /** How many of {@link #leaving} are RECOVERING (the rest are STOPPING); kept as they come and go. */
        private int recovering;
        private final LinkedHashMap<Long, RoutableReplica<I, O>> routable = new LinkedHashMap<>();
        private long nextId;
        private boolean dirty;
        private boolean deferred;
        private boolean removed;
        /** Removed and all its replicas stopped: late reports are ignored. */
        private boolean forgotten;
        private boolean routableChanged;
        private boolean statusChanged = true;
        private int startFailures;
        private long nextStartNanos = Long.MIN_VALUE;
        private String lastError;

        Managed(DeploymentSpec spec, ReplicaLauncher<I, O> launcher, Router<I, O> router,
                Consumer<DeploymentStatus> onStatus) {
            this.spec = spec;
            this.launcher = launcher;
            this.router = router;
            this.onStatus = onStatus;
        }

        int size() {
            return starting.size() + running.size() + outdated.size() + leaving.size();
        }

        boolean isEmpty() {
            return size() == 0;
        }

        /** A version or shape change: every current replica becomes outdated (O(n), only on such a change). */
        void retireCurrentReplicas() {
            outdated.putAll(starting);
            outdated.putAll(running);
            starting.clear();
            running.clear();
        }

        ReconcilePlan reconcile(long now) {
            dirty = false;
            deferred = false;
            int desired = removed ? 0 : spec.numReplicas();
            int active = starting.size() + running.size();
            int start = 0;
            List<ReplicaRecord> stop = null;
            List<ReplicaRecord> update = null;
            if (active < desired) {
                if (now >= nextStartNanos) {
                    start = desired - active;
                    if (!outdated.isEmpty() && !removed) {
                        // A rolling update: a batch of new replicas at a time; outdated ones stop as these run.
                        start = Math.min(start, Math.max(0, spec.rollingUpdateBatch() - starting.size()));
                    }
                } else {
                    deferred = true;
                }
            } else if (active > desired) {
                stop = new ArrayList<>(active - desired);
                takeFirst(starting, active - desired, stop);
                takeFirst(running, active - desired - stop.size(), stop);
            }
            if (!outdated.isEmpty()) {
                int outdatedRoutable = 0;
                for (ReplicaRecord record : outdated.values()) {
                    if (record.state() != ReplicaState.STARTING) {
                        outdatedRoutable++;
                    }
                }
                // Outdated replicas serve until replacements run: stop only as many as are beyond the desired count.
                int excess = removed ? outdatedRoutable
                        : Math.max(0, Math.min(outdatedRoutable, running.size() + outdatedRoutable - desired));
                for (ReplicaRecord record : outdated.values()) {
                    if (record.state() == ReplicaState.STARTING) {
                        stop = add(stop, record);
                    } else if (excess > 0) {
                        stop = add(stop, record);
                        excess--;
                    } else if (record.state() == ReplicaState.RUNNING) {
                        update = add(update, record);
                    }
                }
            }
            if (start == 0 && stop == null && update == null) {
                return ReconcilePlan.noChange();
            }
            return new ReconcilePlan(start, stop == null ? List.of() : stop, update == null ? List.of() : update);
        }

        void apply(ReconcilePlan plan) {
            for (ReplicaRecord record : plan.update()) {
                outdated.put(record.id(), record.withState(ReplicaState.UPDATING));
                statusChanged = true;
            }
            for (ReplicaRecord record : plan.stop()) {
                ReplicaRecord current = removeFromBucket(record.id());
                if (current == null) {
                    continue;
                }
                ReplicaRecord stopping = current.withState(ReplicaState.STOPPING);
                leave(stopping);
                unroute(stopping.id());
                launcher.stop(stopping, spec.rollout().gracefulShutdownTimeout(), this);
            }
            for (int i = 0; i < plan.start(); i++) {
                ReplicaRecord record = ReplicaRecord.starting(spec.name(), nextId++, spec.version());
                starting.put(record.id(), record);
                launcher.start(spec, record, this);
            }
            statusChanged = true;
        }

        void onStarted(long id, RoutableReplica<?, ?> replica) {
            ReplicaRecord record = starting.remove(id);
            if (record == null) {
                ReplicaRecord other = outdated.get(id);
                if (other != null && other.state() == ReplicaState.STARTING) {
                    record = outdated.remove(id);
                    outdated.put(id, record.withState(ReplicaState.RUNNING).withState(ReplicaState.UPDATING));
                    route(id, replica);
                    dirty = true;
                }
                return; // already leaving: the launcher stops it without it ever serving
            }
            running.put(id, record.withState(ReplicaState.RUNNING));
            replica.tune(spec); // the spec may have changed while it started
            route(id, replica);
            startFailures = 0;
            nextStartNanos = Long.MIN_VALUE;
            dirty = true;
        }

        void onFailed(long id, String reason, long now) {
            ReplicaRecord record = removeFromBucket(id);
            if (record == null) {
                return;
            }
            boolean wasStarting = record.state() == ReplicaState.STARTING;
            ReplicaRecord failed = record.withFailure(ReplicaState.RECOVERING, reason);
            leave(failed);
            unroute(id);
            lastError = reason;
            if (LOG.isLoggable(System.Logger.Level.WARNING)) {
                LOG.log(System.Logger.Level.WARNING, "replica {0} {1}: {2}; replacing it", record.name(),
                        wasStarting ? "failed to start" : "is unhealthy", reason);
            }
            if (wasStarting) {
                startFailures++;
                statusChanged = true;
                long backoff = Math.min(MAX_BACKOFF_NANOS, FIRST_BACKOFF_NANOS << Math.min(startFailures - 1, 20));
                nextStartNanos = now + backoff;
            }
            // It takes no new requests from now on; what it admitted may still finish (or fail) within the drain.
            launcher.stop(failed, wasStarting ? Duration.ZERO : spec.rollout().gracefulShutdownTimeout(), this);
            dirty = true;
        }

        void onStopped(long id) {
            ReplicaRecord record = leaving.remove(id);
            if (record != null) {
                if (record.state() == ReplicaState.RECOVERING) {
                    recovering--;
                }
                record.withState(ReplicaState.STOPPED); // validates the move; a stopped replica is then forgotten
            } else if (removeFromBucket(id) != null) {
                unroute(id); // stopped without being asked to: replace it
                dirty = true;
            }
            statusChanged = true;
            if (removed) {
                dirty = true;
            }
        }

        /** Publishes what changed: a new snapshot if the routable set did, a new status if anything did. */
        void afterChange() {
            if (routableChanged) {
                routableChanged = false;
                router.publish(RoutingSnapshot.of(new ArrayList<>(routable.values())));
            }
            if (statusChanged) {
                statusChanged = false;
                onStatus.accept(new DeploymentStatus(spec.name(), spec.version(), removed ? 0 : spec.numReplicas(),
                        starting.size(), running.size(), outdated.size(), leaving.size() - recovering, recovering,
                        startFailures, lastError));
            }
        }

        private void leave(ReplicaRecord record) {
            leaving.put(record.id(), record);
            if (record.state() == ReplicaState.RECOVERING) {
                recovering++;
            }
        }

        private void route(long id, RoutableReplica<?, ?> replica) {
            @SuppressWarnings("unchecked")
            RoutableReplica<I, O> typed = (RoutableReplica<I, O>) replica;
            routable.put(id, typed);
            routableChanged = true;
            statusChanged = true;
        }

        private void unroute(long id) {
            if (routable.remove(id) != null) {
                routableChanged = true;
            }
            statusChanged = true;
        }

        private ReplicaRecord removeFromBucket(long id) {
            ReplicaRecord record = starting.remove(id);
            if (record == null) {
                record = running.remove(id);
            }
            if (record == null) {
                record = outdated.remove(id);
            }
            return record;
        }

        // ReplicaEvents: reports from launcher threads, handed to the controller thread, to this deployment.

        @Override
        public void started(long id, RoutableReplica<I, O> replica) {
            events.execute(() -> {
                if (!forgotten) {
                    onStarted(id, replica);
                    afterChange();
                }
            });
        }

        @Override
        public void failed(long id, String reason) {
            events.execute(() -> {
                if (!forgotten) {
                    onFailed(id, reason, nanoTime.getAsLong());
                    afterChange();
                }
            });
        }

        @Override
        public void stopped(long id) {
            events.execute(() -> {
                if (!forgotten) {
                    onStopped(id);
                    afterChange();
                }
            });
        }
    }

    private static void takeFirst(LinkedHashMap<Long, ReplicaRecord> bucket, int count, List<ReplicaRecord> into) {
        Iterator<ReplicaRecord> records = bucket.values().iterator();
        for (int i = 0; i < count && records.hasNext(); i++) {
            into.add(records.next());
        }
    }

    private static List<ReplicaRecord> add(List<ReplicaRecord> list, ReplicaRecord record) {
        List<ReplicaRecord> target = list == null ? new ArrayList<>() : list;
        target.add(record);
        return target;
    }
}
