package dev.serval.spec;

/**
 * A deployment's replica counts: the replicas it should run ({@code desired}: its {@code num_replicas}, or the
 * autoscaler's count when {@code autoscaled}), its replicas per {@code ReplicaState}, its consecutive failed starts
 * (0 once a replica starts) and its last error, as the controller last saw them. Immutable; a new one is published only when
 * something changed.
 *
 * <p>Not to be confused with {@link DeploymentState}, the deployment's serving condition (loading, ready, failed,
 * stopped) that callers check before sending requests, derived in part from these counts.
 */
public record DeploymentStatus(String name, String version, int desired, int starting, int running, int updating,
        int stopping, int recovering, int failedStarts, String lastError, boolean autoscaled) {

    /** The status of a deployment the controller has not looked at yet: {@code desired} replicas, none started. */
    public static DeploymentStatus initial(String name, String version, int desired, boolean autoscaled) {
        return new DeploymentStatus(name, version, desired, 0, 0, 0, 0, 0, 0, null, autoscaled);
    }

    /**
     * An autoscaled deployment at zero replicas, none starting: it waits for a request. Also after failed starts
     * (their error stays in {@code lastError}): the next request tries a replica again, and while the controller backs
     * off from the failures, requests are refused at once with that error.
     */
    public boolean idle() {
        return autoscaled && desired == 0 && routable() == 0 && starting == 0;
    }

    /** Replicas that take requests: RUNNING and UPDATING. */
    public int routable() {
        return running + updating;
    }
}
