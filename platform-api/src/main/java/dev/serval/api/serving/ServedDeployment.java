package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
import dev.serval.predictor.Embedding;

/** A running deployment together with its meters: what a request needs, found with one map lookup. */
public record ServedDeployment(Deployment<String, Embedding> deployment, DeploymentMeters meters) {

    public String name() {
        return deployment.name();
    }
}
