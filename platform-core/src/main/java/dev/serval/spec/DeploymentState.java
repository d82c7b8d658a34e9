package dev.serval.spec;

/**
 * A deployment's serving condition: whether it takes requests now, and if not, why. Derived on each read from
 * whether it is closed, its routable replicas, its {@link DeploymentStatus} and whether it is loaded on demand; only
 * {@link #READY} serves.
 *
 * <p>Not to be confused with {@link DeploymentStatus}, the controller's published counts of replicas per
 * {@code ReplicaState} (the state of one replica), from which this is derived.
 */
public enum DeploymentState {
    /** No routable replica yet; replicas are starting. */
    LOADING,
    /** At least one replica is RUNNING (or UPDATING) and takes requests. */
    READY,
    /** No routable replica, none starting, and the last start failed; retried with back-off. */
    FAILED,
    /**
     * Autoscaled to zero replicas: its model is released, and a request starts a replica (it waits for it, within
     * its deadline and the deployment's queue bound).
     */
    IDLE,
    /**
     * Asked for no replica ({@code num_replicas: 0}, not autoscaled, not loaded on demand): none runs and none is
     * wanted, as asked; requests are refused until a change asks for replicas.
     */
    PARKED,
    /** Closed or being closed. */
    STOPPED;

    /**
     * The condition of a deployment that is {@code closed} or not, has {@code routable} replicas in its routing
     * snapshot, whose controller last published {@code status}, and that is loaded on demand ({@code onDemand}: at
     * zero replicas it waits for a request, a multiplexed model) or not.
     */
    public static DeploymentState of(boolean closed, int routable, DeploymentStatus status, boolean onDemand) {
        if (closed) {
            return STOPPED;
        }
        if (routable > 0) {
            return READY;
        }
        if (status.idle()) {
            return IDLE;
        }
        if (status.desired() == 0 && status.starting() == 0 && !status.autoscaled() && !onDemand) {
            return PARKED;
        }
        return status.failedStarts() > 0 && status.starting() == 0 ? FAILED : LOADING;
    }

    /**
     * Whether a deployment in this condition, with {@code routable} replicas routable, serves as {@code spec} asks
     * (its model's own ready endpoint): at least {@code min_ready_replicas} routable, or, autoscaled, at least one and
     * as many as it keeps ({@code min_ready_replicas} up to {@code min_replicas}). An autoscaled deployment at zero
     * replicas is not ready.
     */
    public boolean ready(DeploymentSpec spec, int routable) {
        int needed = spec.isAutoscaled()
                ? Math.max(1, Math.min(spec.health().minReadyReplicas(), spec.autoscaling().minReplicas()))
                : spec.health().minReadyReplicas();
        return this == READY && routable >= needed;
    }

    /**
     * Whether such a deployment lets the server report ready: when {@link #ready}; when it needs no replica for that
     * ({@code min_ready_replicas: 0}, as a deployment parked at {@code num_replicas: 0} must have); and, autoscaled
     * and allowed to go to zero, while it is at zero or starting a replica for a request: the server is what will
     * serve that request, so it must stay in its Service.
     */
    public boolean readyForServer(DeploymentSpec spec, int routable) {
        if ((!spec.isAutoscaled() && spec.health().minReadyReplicas() == 0) || ready(spec, routable)) {
            return true;
        }
        return spec.isAutoscaled() && spec.autoscaling().minReplicas() == 0 && (this == IDLE || this == LOADING);
    }
}
