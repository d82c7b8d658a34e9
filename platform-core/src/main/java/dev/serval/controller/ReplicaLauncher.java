package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;

/**
 * The controller's effects on real replicas. Both methods return at once and report back through
 * {@link ReplicaEvents} from whatever thread finishes the work (the controller serialises the reports).
 */
public interface ReplicaLauncher<I, O> {

    /** Starts {@code replica} (load or reuse the model, warm up); reports {@code started} or {@code failed}. */
    void start(DeploymentSpec spec, ReplicaRecord replica, ReplicaEvents<I, O> events);

    /**
     * Stops {@code replica}: it takes no new requests, drains what it admitted for up to {@code drain}, then
     * releases its predictors; reports {@code stopped}. Also valid for a replica still starting (it is stopped as
     * soon as its start finishes, without ever being reported started) and for one that failed.
     */
    void stop(ReplicaRecord replica, Duration drain, ReplicaEvents<I, O> events);
}
