package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.util.ArrayList;
import java.util.HashMap;
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
 * <p>Each deployment's replicas, and their reconciliation toward its spec, are a {@link ReplicaSet}: four buckets
 * (starting, running, outdated, leaving) whose sizes are the counts reconciliation needs.
 *
 * <p>Cost rules, from production lessons (Ray Serve rebuilt every replica record on every tick; Pekko gates a
 * rare check behind a flag): an event or a spec change sets {@code dirty}; {@link #tick()} skips a deployment that
 * is not dirty and has no start deferred by back-off, so a tick with nothing to do reads two fields per deployment
 * and allocates nothing. Stopping k replicas touches those k records (and counts stay O(1) per report). A new
 * {@link dev.serval.routing.RoutingSnapshot} is built and published only when the set of routable replicas changed; building it copies
 * the deployment's routable replicas into a new array, O(n) once per change (the price of lock-free reads).
 */
public final class Controller {

    private final LongSupplier nanoTime;
    private final Executor events;
    private final Map<String, ReplicaSet<?, ?>> byName = new HashMap<>();
    private final ArrayList<ReplicaSet<?, ?>> deployments = new ArrayList<>();

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
        ReplicaSet<I, O> managed = (ReplicaSet<I, O>) byName.get(spec.name());
        if (managed != null && managed.removed) {
            // A new deployment under the name of one still stopping: the old one stops on its own, detached.
            byName.remove(spec.name());
            ReplicaSet<I, O> created = new ReplicaSet<>(spec, launcher, router, onStatus, events, nanoTime);
            created.nextId = managed.nextId; // replica ids (and their meters) stay unique under the name
            managed = created;
            byName.put(spec.name(), managed);
            deployments.add(managed);
        } else if (managed == null) {
            managed = new ReplicaSet<>(spec, launcher, router, onStatus, events, nanoTime);
            byName.put(spec.name(), managed);
            deployments.add(managed);
        } else {
            if (!managed.spec.sameReplicaShape(spec)) {
                managed.retireCurrentReplicas();
            } else if (!managed.spec.equals(spec)) {
                for (RoutableReplica<I, O> replica : managed.routable.values()) {
                    // batch size, wait, idle spin, token budgets change in place, O(n) once per such change
                    replica.tune(spec);
                }
            }
            managed.respec(spec);
            router.maxQueuedRequests(spec.admission().maxQueuedRequests());
            router.pendingTokens().limit(spec.admission().maxPendingTokens());
        }
        managed.dirty = true;
        managed.afterChange(); // the status shows the change from now on, not from the next tick
    }

    /**
     * The autoscaler's decision for {@code name}: run {@code replicas} (within its spec's bounds) from now on, as any
     * spec change would; ignored for a deployment that is not autoscaled (its autoscaling was turned off since the
     * decision) or is unknown or being removed.
     */
    public void scale(String name, int replicas) {
        ReplicaSet<?, ?> managed = byName.get(name);
        if (managed != null && !managed.removed) {
            managed.scale(replicas);
            managed.afterChange();
        }
    }

    /**
     * Stops every replica of the deployment; when the last has stopped, closes its router (failing queued
     * requests) and forgets it, then runs {@code onRemoved}. The name is free for {@link #apply} at once.
     */
    public void remove(String name, Runnable onRemoved) {
        ReplicaSet<?, ?> managed = byName.get(name);
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
            ReplicaSet<?, ?> managed = deployments.get(i);
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
        ReplicaSet<?, ?> managed = require(name);
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
        ReplicaSet<?, ?> managed = byName.get(name);
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
        ReplicaSet<?, ?> managed = byName.get(name);
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

    private ReplicaSet<?, ?> require(String name) {
        ReplicaSet<?, ?> managed = byName.get(name);
        if (managed == null) {
            throw new IllegalArgumentException("no deployment '" + name + "'");
        }
        return managed;
    }

    private void forget(ReplicaSet<?, ?> managed) {
        byName.remove(managed.spec.name(), managed); // the name may already belong to a new deployment
        deployments.remove(managed);
        managed.forgotten = true;
        managed.router.close();
        for (Runnable callback : managed.onRemoved) {
            callback.run();
        }
    }

}
