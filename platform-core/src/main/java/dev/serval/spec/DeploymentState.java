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
}
