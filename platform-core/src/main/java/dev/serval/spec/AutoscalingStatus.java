package dev.serval.spec;

/**
 * What the autoscaler last saw and did for one deployment; immutable, replaced at every decision.
 *
 * @param ongoingRequests the requests running and queued, averaged over {@code look_back_period} (NaN before the
 *                        first sample)
 * @param wantedReplicas  the replicas that load calls for, before delays and the CPU budget
 * @param reason          what the last decision did or why it waits, in words
 * @param lastChange      the last change of the replica count it made, or null before the first
 */
public record AutoscalingStatus(double ongoingRequests, int wantedReplicas, String reason,
        AutoscalingDecision lastChange) {
}
