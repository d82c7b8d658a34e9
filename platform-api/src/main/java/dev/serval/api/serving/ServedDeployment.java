package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.UnknownDeployment;
import dev.serval.model.Embedding;
import dev.serval.model.ModelKind;
import dev.serval.repository.MultiplexedDeployment;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;

/**
 * A running deployment with what the edge needs beside it: its meters, its kind and its current config (replaced
 * in place when the config changes). Found with one map lookup per request.
 *
 * <p>Three sorts: a deployment of one model; a multiplexed deployment ({@link #multiplexed()}, whose {@code model} is
 * a glob), which serves no request itself but holds the models it matches; and one of those models, served by a
 * deployment of its own ({@link #pinned()}), which a request pins while it runs ({@link #pin()}, {@link #release()}).
 */
public final class ServedDeployment {

    private final Deployment<?, ?> deployment;
    private final RequestMeters meters;
    private final ModelKind kind;
    /** For a model of a multiplexed deployment: the engine's member, through which a request pins it; else null. */
    private final MultiplexedDeployment.Member<ServedDeployment> pin;
    /** For a multiplexed deployment: its models; else null. */
    private final MultiplexedModels multiplexed;
    /**
     * The current config, for the edge (request timeout, readiness, the management API's view); written by
     * {@link Deployments} under its lock, read by request threads (a multiplexed model's is its engine member's,
     * {@link #config()}). The model loader never reads it: it loads the spec it is given.
     */
    private volatile DeploymentSpec config;

    ServedDeployment(Deployment<?, ?> deployment, RequestMeters meters, ModelKind kind, DeploymentSpec initial) {
        this.deployment = deployment;
        this.meters = meters;
        this.kind = kind;
        this.config = initial;
        this.multiplexed = null;
        this.pin = null;
    }

    /** A model of a multiplexed deployment, served by its own deployment; its config is the engine's member's. */
    ServedDeployment(MultiplexedDeployment.Member<ServedDeployment> model, RequestMeters meters) {
        this.deployment = model.deployment();
        this.meters = meters;
        this.kind = model.kind();
        this.config = model.spec();
        this.multiplexed = null;
        this.pin = model;
    }

    /** A multiplexed deployment. */
    ServedDeployment(MultiplexedModels multiplexed) {
        this.deployment = null;
        this.meters = null;
        this.kind = null;
        this.config = multiplexed.config();
        this.multiplexed = multiplexed;
        this.pin = null;
    }

    public String name() {
        return config().name();
    }

    /**
     * The deployment that serves requests.
     *
     * @throws IllegalStateException for a multiplexed deployment, which serves through its models' deployments
     */
    public Deployment<?, ?> deployment() {
        if (deployment == null) {
            throw new IllegalStateException("deployment '" + name() + "' is multiplexed: its models serve requests");
        }
        return deployment;
    }

    /** The models of a multiplexed deployment, or null for a deployment of one model. */
    public MultiplexedModels multiplexed() {
        return multiplexed;
    }

    /** Whether this is a model of a multiplexed deployment: a request pins it ({@link #pin()}) before it runs. */
    public boolean pinned() {
        return pin != null;
    }

    /**
     * For a model of a multiplexed deployment: pins it for one request that is valid and about to run, and starts its
     * load if no replica holds it (the caller {@link #release()}s it once the request ended); nothing for another
     * deployment. A request refused before this point loads nothing and evicts nothing.
     *
     * @throws UnknownDeployment when the model left the repository since the request found it
     * @throws NotReady         when it can never load (larger than {@code max_model_memory}) or its
     *     deployment is shutting down
     */
    public void pin() {
        if (pin != null) {
            pin.pin();
        }
    }

    /** Gives back the pin a request took on a multiplexed model ({@link #pin()}); else nothing. */
    public void release() {
        if (pin != null) {
            pin.release();
        }
    }

    public RequestMeters meters() {
        return meters;
    }

    public ModelKind kind() {
        return kind;
    }

    public DeploymentSpec config() {
        return pin != null ? pin.spec() : config;
    }

    void config(DeploymentSpec next) {
        config = next;
    }

    public Duration requestTimeout() {
        return config().admission().requestTimeout();
    }

    /**
     * The deployment, checked to serve a text-embedding model, for the OpenAI embeddings API
     * ({@link Deployment#embed}).
     *
     * @throws InvalidInput when the model is of another kind
     */
    public Deployment<?, ?> embeddings() {
        if (kind != ModelKind.TEXT_EMBEDDING) {
            throw new InvalidInput("model", "model '" + name() + "' is a " + kind.id() + " model; /v1/embeddings "
                    + "serves text-embedding models (use /v2/models/" + name() + "/infer)");
        }
        return deployment;
    }

    /**
     * Whether the model serves now (its own ready endpoint), as the engine judges its condition against its config
     * ({@code DeploymentState.ready}); a multiplexed deployment is, as its models load on demand.
     */
    public boolean ready() {
        return multiplexed != null || deployment.state().ready(config(), deployment.routableReplicas());
    }

    /**
     * Whether this deployment lets the server report ready ({@code /q/health/ready}, {@code /v2/health/ready}), as
     * the engine judges it ({@code DeploymentState.readyForServer}: also while it needs no replica, or, autoscaled,
     * while it is at zero or starting a replica for a request); a multiplexed deployment always does.
     */
    public boolean readyForServer() {
        return multiplexed != null || deployment.state().readyForServer(config(), deployment.routableReplicas());
    }
}
