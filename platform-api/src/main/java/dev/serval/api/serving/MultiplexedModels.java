package dev.serval.api.serving;

import dev.serval.repository.MultiplexedDeployment;
import dev.serval.spec.DeploymentSpec;

/**
 * A multiplexed deployment at the edge: the engine's {@link MultiplexedDeployment} (the repository models its glob
 * matches, each served, while loaded, by a deployment of that model under the model's own name), with each model's
 * {@link ServedDeployment} (its request meters and kind beside its deployment) made once, when the model is first
 * asked for.
 *
 * <p>Threads: {@link #config} is written by {@link Deployments} under its lock and read by any thread; the engine's
 * deployment says which threads its parts run on.
 */
public final class MultiplexedModels {

    private final MultiplexedDeployment<ServedDeployment> deployment;
    private volatile DeploymentSpec config;

    MultiplexedModels(DeploymentSpec config, MultiplexedDeployment<ServedDeployment> deployment) {
        this.config = config;
        this.deployment = deployment;
    }

    public String name() {
        return config.name();
    }

    public DeploymentSpec config() {
        return config;
    }

    /** The engine's multiplexed deployment: its models, their state and its autoscaling. */
    public MultiplexedDeployment<ServedDeployment> deployment() {
        return deployment;
    }

    /**
     * Whether the deployment's glob matches {@code model} (whether or not the repository holds it). A client's name is
     * checked to be a model name first (bounded length and alphabet), then matched without backtracking.
     */
    public boolean globMatches(String model) {
        return deployment.globMatches(model);
    }

    /**
     * The deployment serving {@code model}, neither pinned nor loaded: a request pins it once it is valid and about to
     * run ({@link ServedDeployment#pin()}), and metadata is read from it without a load; null when the repository
     * holds no model of that name that the glob matches (as of the last scan).
     */
    ServedDeployment model(String model) {
        return deployment.model(model);
    }

    /** {@link Deployments} only, under its lock: takes a changed config (the glob stays, see Deployments). */
    void update(DeploymentSpec next) {
        config = next;
        deployment.update(next);
    }

    /** Closes every model's deployment (each drains its requests) and the multiplexer. */
    void close() {
        deployment.close();
    }
}
