package dev.serval.deployment;

import dev.serval.predictor.Model;
import dev.serval.spec.DeploymentSpec;

/**
 * Loads a deployment's model for one version of its spec. Called on a launcher thread, never on a request thread,
 * and at most once per version at a time: all replicas of a version share what it returns.
 */
@FunctionalInterface
public interface ModelLoader<I, O> {

    Model<I, O> load(DeploymentSpec spec) throws Exception;
}
