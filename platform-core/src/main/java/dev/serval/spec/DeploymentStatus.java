package dev.serval.spec;

import java.time.Instant;

/**
 * A deployment's replica counts: the replicas it should run ({@code desired}: its {@code num_replicas}, or the
 * autoscaler's count when {@code autoscaled}), its replicas per {@code ReplicaState}, its consecutive failed starts
 * (0 once a replica starts) and its last error, as the controller last saw them. Immutable; a new one is published only when
 * something changed.
 *
 * <p>The parts of a deployment's status that other owners write are records of their own here, read beside it: what
 * the autoscaler last saw and did ({@link Autoscaling}, with its last {@link Autoscaling.Change}) and the result cache
 * now ({@link Cache}). The management API and the dashboard render the three together.
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

    /**
     * What the autoscaler last saw and did for one deployment; immutable, replaced at every decision.
     *
     * @param ongoingRequests the requests running and queued, averaged over {@code look_back_period} (NaN before the
     *                        first sample)
     * @param wantedReplicas  the replicas that load calls for, before delays and the CPU budget
     * @param reason          what the last decision did or why it waits, in words
     * @param lastChange      the last change of the replica count it made, or null before the first
     */
    public record Autoscaling(double ongoingRequests, int wantedReplicas, String reason, Change lastChange) {

        /**
         * A change of an autoscaled deployment's replica count the autoscaler made.
         *
         * @param at     when
         * @param from   the replicas before
         * @param to     the replicas after
         * @param reason why: the load it was made on and the delay or budget that applied
         */
        public record Change(Instant at, int from, int to, String reason) {
        }
    }

    /**
     * A deployment's result cache as it is now; an immutable snapshot, read at once.
     *
     * @param active       whether lookups happen: the setting is on and the model is of a kind that caches (text)
     * @param grantedBytes the bound the cache holds to: its {@code max_bytes}, or less when the server's ceiling
     *                     ({@code serval.cache.max-bytes}) is shared with other deployments; 0 while not active
     * @param bytes        bytes of keys and values held now (Caffeine's weighted size)
     * @param entries      entries held now (an estimate)
     * @param hits         inputs answered from the cache since the deployment was created
     * @param lookups      inputs looked up since then: hits, misses and those that waited for an identical one running
     */
    public record Cache(boolean active, long grantedBytes, long bytes, long entries, long hits, long lookups) {

        /** A deployment without a cache. */
        public static final Cache INACTIVE = new Cache(false, 0, 0, 0, 0, 0);
    }
}
