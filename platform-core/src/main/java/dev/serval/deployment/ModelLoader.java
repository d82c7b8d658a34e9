package dev.serval.deployment;

import dev.serval.model.Model;
import dev.serval.spec.DeploymentSpec;

/**
 * Loads a deployment's model for one version of its spec. Called on a launcher thread, never on a request thread,
 * and at most once per version at a time: all replicas of a version share what it returns.
 *
 * <p>Contract: the model depends only on the spec passed in, and only on its {@code model} (the reference with its
 * loader options), {@code version}, {@code intraOpThreads} and {@code batchInvariance}: these make the key under
 * which the loaded model is shared, so reading anything else (a newer config, another field) could hand a replica a
 * model built for another spec. The spec may already be older than the deployment's current one (the deployment changed
 * while the replica was starting): it is still the one to load.
 */
@FunctionalInterface
public interface ModelLoader<I, O> {

    Model<I, O> load(DeploymentSpec spec) throws Exception;

    /**
     * Whether each replica loads a model of its own instead of sharing its version's: true for models that hold
     * per-replica state (a custom handler: its own instance and class loader, so that a replacement starts afresh).
     * By default false: weights are loaded once per version.
     */
    default boolean perReplica() {
        return false;
    }
}
