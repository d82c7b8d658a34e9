package dev.serval.autoscaling;

import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;

/** One deployment as the {@link Autoscaler} sees it: its load, its count, and how to change the count. */
public interface ScalingTarget {

    String name();

    /** The deployment's current spec; the autoscaler acts only while it {@link DeploymentSpec#isAutoscaled()}. */
    DeploymentSpec spec();

    /**
     * Requests its replicas run and its queue holds now, and at least 1 when a request arrived since the previous
     * call: a deployment whose requests are all shorter than the sampling period must not look idle (and go to
     * zero) while it gets them. The autoscaler thread calls it once per sample; reads counters, allocates nothing.
     */
    int ongoingRequests();

    /** The replicas its controller runs now (the count the last decision set, once the controller applied it). */
    int desiredReplicas();

    /** Hands the controller a new count, which applies it as it applies any spec change (never blocks). */
    void scale(int replicas);

    /**
     * Publishes the autoscaler's latest view of the deployment ({@link DeploymentStatus.Autoscaling}), after each
     * decision and before {@link #scale} hands the controller a count that decision changed.
     *
     * @param changed       whether this decision changed the count (its
     *                      {@link DeploymentStatus.Autoscaling#lastChange()})
     * @param budgetRefused whether the CPU budget granted fewer replicas than the decision wanted
     */
    void autoscaled(DeploymentStatus.Autoscaling status, boolean changed, boolean budgetRefused);
}
