package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import dev.serval.replica.ReplicaState;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One deployment's replicas as the {@link Controller} sees them, and the reconciliation of their count, version and
 * routing toward its spec. <b>Controller thread only</b>, like the controller: its fields are read and written by the
 * controller (same package) and by the reports of its replicas, which {@link ReplicaEvents} hands to the controller
 * thread first ({@code events}).
 *
 * <p>Replicas sit in four insertion-ordered buckets keyed by id: {@code starting} and {@code running} (the current
 * version), {@code outdated} (another version, still starting or serving) and {@code leaving} (STOPPING or
 * RECOVERING). A replica is in exactly one bucket, so the counts that reconciliation needs are bucket sizes, and
 * finding or moving a replica is O(1). Records are immutable and replaced only when their state changes.
 * {@link #reconcile} returns a plan ({@link ReconcilePlan#noChange()} when there is nothing to do);
 * {@link #apply} carries it out; {@link #afterChange} publishes a new routing snapshot only when the routable set
 * changed, and a new status only when a count did.
 */
final class ReplicaSet<I, O> implements ReplicaEvents<I, O> {

    private static final System.Logger LOG = System.getLogger(Controller.class.getName());
    private static final long MAX_BACKOFF_NANOS = Duration.ofMinutes(1).toNanos();
    private static final long FIRST_BACKOFF_NANOS = Duration.ofSeconds(1).toNanos();

    DeploymentSpec spec;
    final ReplicaLauncher<I, O> launcher;
    final Router<I, O> router;
    private final Consumer<DeploymentStatus> onStatus;
    private final Executor events;
    private final LongSupplier nanoTime;
    final List<Runnable> onRemoved = new ArrayList<>(1);
    final LinkedHashMap<Long, ReplicaRecord> starting = new LinkedHashMap<>();
    final LinkedHashMap<Long, ReplicaRecord> running = new LinkedHashMap<>();
    final LinkedHashMap<Long, ReplicaRecord> outdated = new LinkedHashMap<>();
    final LinkedHashMap<Long, ReplicaRecord> leaving = new LinkedHashMap<>();
    /** How many of {@link #leaving} are RECOVERING (the rest are STOPPING); kept as they come and go. */
    private int recovering;
    final LinkedHashMap<Long, RoutableReplica<I, O>> routable = new LinkedHashMap<>();
    long nextId;
    boolean dirty;
    boolean deferred;
    boolean removed;
    /** Removed and all its replicas stopped: late reports are ignored. */
    boolean forgotten;
    private boolean routableChanged;
    private boolean statusChanged = true;
    private int startFailures;
    long nextStartNanos = Long.MIN_VALUE;
    private String lastError;
    /**
     * The replicas an autoscaled spec runs now: set from its initial count when the deployment is created or its
     * autoscaling turned on, by the autoscaler's decisions ({@link #scale}), and clamped to a new spec's bounds.
     * Unused for a fixed spec, which runs {@code num_replicas}.
     */
    private int autoscaled;

    ReplicaSet(DeploymentSpec spec, ReplicaLauncher<I, O> launcher, Router<I, O> router,
            Consumer<DeploymentStatus> onStatus, Executor events, LongSupplier nanoTime) {
        this.spec = spec;
        this.launcher = launcher;
        this.router = router;
        this.onStatus = onStatus;
        this.events = events;
        this.nanoTime = nanoTime;
        this.autoscaled = spec.numReplicas();
    }

    /** The replicas to keep running: the spec's fixed count, or the autoscaler's. */
    int desired() {
        return removed ? 0 : spec.isAutoscaled() ? autoscaled : spec.numReplicas();
    }

    /**
     * Takes a new spec. An autoscaled one keeps the current count within its new bounds; one whose autoscaling was
     * just turned on starts from the current count too (within its bounds), not from its initial count.
     */
    void respec(DeploymentSpec next) {
        int before = desired();
        boolean wasAutoscaled = spec.isAutoscaled();
        if (next.isAutoscaled()) {
            autoscaled = next.autoscaling().clamp(spec.isAutoscaled() ? autoscaled : spec.numReplicas());
        }
        spec = next;
        if (desired() != before || next.isAutoscaled() != wasAutoscaled) {
            statusChanged = true; // the status shows both
        }
    }

    /** The autoscaler's decision: {@code replicas} (clamped to the spec's bounds) from now on; ignored when fixed. */
    void scale(int replicas) {
        if (!spec.isAutoscaled()) {
            return;
        }
        int next = spec.autoscaling().clamp(replicas);
        if (next != autoscaled) {
            autoscaled = next;
            dirty = true;
            statusChanged = true;
        }
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
        int desired = desired();
        int active = starting.size() + running.size();
        int start = 0;
        List<ReplicaRecord> stop = null;
        List<ReplicaRecord> update = null;
        if (active < desired) {
            if (now >= nextStartNanos) {
                start = desired - active;
                if (!outdated.isEmpty() && !removed) {
                    // A rolling update: a batch of new replicas at a time; outdated ones stop as these run.
                    start = Math.min(start, Math.max(0, spec.rollingUpdateBatch(desired) - starting.size()));
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
            onStatus.accept(new DeploymentStatus(spec.name(), spec.version(), desired(), starting.size(),
                    running.size(), outdated.size(), leaving.size() - recovering, recovering, startFailures, lastError,
                    spec.isAutoscaled()));
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
