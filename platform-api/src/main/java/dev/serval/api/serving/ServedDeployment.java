package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
import dev.serval.predictor.Embedding;

/**
 * A running deployment together with its meters and readiness minimum: what a request needs, found with one
 * map lookup.
 */
public record ServedDeployment(Deployment<String, Embedding> deployment, DeploymentMeters meters, int minReadyReplicas,
        java.time.Duration requestTimeout) {

    public String name() {
        return deployment.name();
    }

    /** Whether at least {@code minReadyReplicas} replicas are routable. */
    public boolean ready() {
        return deployment.state() == Deployment.State.READY
                && deployment.router().routableReplicas() >= minReadyReplicas;
    }
}
