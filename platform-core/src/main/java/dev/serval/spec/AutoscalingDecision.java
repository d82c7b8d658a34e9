package dev.serval.spec;

import java.time.Instant;

/**
 * A change of an autoscaled deployment's replica count the autoscaler made.
 *
 * @param at     when
 * @param from   the replicas before
 * @param to     the replicas after
 * @param reason why: the load it was made on and the delay or budget that applied
 */
public record AutoscalingDecision(Instant at, int from, int to, String reason) {
}
