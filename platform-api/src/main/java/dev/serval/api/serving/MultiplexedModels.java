package dev.serval.api.serving;

import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.NotReady;
import dev.serval.model.ModelKind;
import dev.serval.multiplex.MultiplexScaling;
import dev.serval.multiplex.Multiplexer;
import dev.serval.repository.GlobCatalog;
import dev.serval.repository.ModelRepository;
import dev.serval.spec.AutoscalingStatus;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.ModelReference;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/**
 * A multiplexed deployment as Serval runs it: the repository models its glob matches, each served, while loaded, by
 * a deployment of that model under the model's own name with one replica, created on the model's first request with
 * none and given its replica when the {@link Multiplexer} places it. So a multiplexed model is served exactly like
 * any deployment (router, admission, batching, health, rolling updates, meters under its own name), and requests that
 * arrive while it loads wait in its queue.
 *
 * <p>Threads: the catalog's scan ({@link GlobCatalog}) runs on the multiplexer's refresher thread (and once at
 * creation); the hosting methods run under the multiplexer's lock on request threads (never blocking: creating a
 * deployment and changing its replica count only hand work to the controller) except {@link #close(ServedDeployment)}, on the multiplexer's closer
 * thread or the closing thread. {@link #config} is written by {@link Deployments} under its lock and read by any
 * thread; a model's config ({@code ServedDeployment.config}) is written only under the multiplexer's lock ({@link
 * #update} takes it).
 */
public final class MultiplexedModels implements Multiplexer.Hosting<ServedDeployment> {

    private static final Logger LOG = Logger.getLogger(MultiplexedModels.class);

    private final String name;
    private final String glob;
    private final ServingEngine engine;
    private final MeterRegistry registry;
    private final ModelSource source;
    private final Multiplexer<ServedDeployment> multiplexer;
    /** The repository's models the glob matches, with their kinds (read under the multiplexer's lock to create one). */
    private final GlobCatalog catalog;
    private volatile DeploymentSpec config;
    /** The deployment as the engine's autoscaler drives it. */
    private final MultiplexScaling scaling;

    MultiplexedModels(DeploymentSpec config, ServingEngine engine, MeterRegistry registry, ModelRepository repository,
            ModelSource source) {
        this.name = config.name();
        this.config = config;
        this.glob = config.model().name();
        this.engine = engine;
        this.registry = registry;
        this.source = source;
        this.catalog = new GlobCatalog(repository, name, glob, this::servedKind);
        this.multiplexer = new Multiplexer<>(name, config.numReplicas(), config.multiplex(), this, catalog,
                engine.settings().multiplexTuning(), System::nanoTime, registry);
        this.scaling = new MultiplexScaling(multiplexer, config);
        engine.autoscaler().register(scaling);
    }

    /** The kind {@code model} is served as, or null while it is not served. */
    private ModelKind servedKind(String model) {
        // Null during the first scan, which the multiplexer's constructor runs: no model is served yet.
        ServedDeployment served = multiplexer == null ? null : multiplexer.find(model);
        return served == null ? null : served.kind();
    }

    /** The autoscaler's latest view; empty while not autoscaled or before its first decision. */
    public Optional<AutoscalingStatus> autoscaling() {
        return scaling.status();
    }

    public String name() {
        return name;
    }

    public DeploymentSpec config() {
        return config;
    }

    public Multiplexer<ServedDeployment> multiplexer() {
        return multiplexer;
    }

    /**
     * Whether the deployment's glob matches {@code model} (whether or not the repository holds it). A client's name is
     * checked to be a model name first (bounded length and alphabet), then matched without backtracking.
     */
    public boolean globMatches(String model) {
        return DeploymentSpec.isName(model) && MultiplexSpec.matches(glob, model);
    }

    /**
     * The deployment serving {@code model}, neither pinned nor loaded: a request pins it once it is valid and about to
     * run ({@link ServedDeployment#pin()}), and metadata is read from it without a load; null when the repository
     * holds no model of that name that the glob matches (as of the last scan).
     */
    ServedDeployment model(String model) {
        Multiplexer.Entry<ServedDeployment> entry = multiplexer.entry(model);
        return entry == null ? null : entry.handle();
    }

    /** {@link Deployments} only, under its lock: takes a changed config (the glob stays, see Deployments). */
    void update(DeploymentSpec next) {
        config = next;
        int replicas = scaling.replicasAfter(next);
        // Under the multiplexer's lock, which its hosting calls hold too: a model's config is never written by both.
        synchronized (multiplexer) {
            multiplexer.configure(replicas, next.multiplex());
            for (ServedDeployment model : multiplexer.handles()) {
                DeploymentSpec current = model.config();
                DeploymentSpec changed = modelSpec(next, model.name(), current.version(), current.numReplicas());
                model.config(changed);
                model.deployment().update(changed);
            }
        }
    }

    /** Closes every model's deployment (each drains its requests) and the multiplexer. */
    void close() {
        engine.autoscaler().unregister(scaling);
        multiplexer.close();
    }

    // --- Multiplexer.Catalog ---------------------------------------------------------------------------------------

    /** The versions the last scan skipped, by model and version. */
    public List<GlobCatalog.NotServed> notServed() {
        return catalog.notServed();
    }

    // --- Multiplexer.Hosting ---------------------------------------------------------------------------------------

    @Override
    public ServedDeployment create(String model, String version) {
        ModelKind kind = catalog.kind(model);
        if (kind == null) {
            throw new NotReady("model '" + model + "' is being rescanned; retry");
        }
        DeploymentSpec spec = modelSpec(config, model, version, 0);
        Deployment<Object, Object> deployment;
        try {
            deployment = engine.deployOnDemand(spec, Deployments.loader(source, kind), kind);
        } catch (IllegalArgumentException e) {
            throw new NotReady("model '" + model + "' is still being unloaded after it left the repository; retry");
        }
        return new ServedDeployment(deployment, new RequestMeters(deployment, registry, kind), kind, spec);
    }

    @Override
    public void bound(ServedDeployment model, Multiplexer.Entry<ServedDeployment> entry) {
        model.pinnedThrough(entry);
    }

    @Override
    public CompletableFuture<Void> replicas(ServedDeployment model, int count) {
        DeploymentSpec next = model.config().withNumReplicas(count);
        model.config(next);
        model.deployment().update(next);
        return model.deployment().serving();
    }

    @Override
    public void update(ServedDeployment model, String version) {
        DeploymentSpec next = model.config().withVersion(version);
        model.config(next);
        model.deployment().update(next);
    }

    @Override
    public int ongoing(ServedDeployment model) {
        return model.deployment().ongoingRequests();
    }

    @Override
    public int queued(ServedDeployment model) {
        return model.deployment().queuedRequests();
    }

    @Override
    public int serving(ServedDeployment model) {
        return model.deployment().routableReplicas();
    }

    @Override
    public int capacity(ServedDeployment model) {
        return model.config().admission().maxOngoingRequests();
    }

    @Override
    public boolean failed(ServedDeployment model) {
        return model.deployment().state() == DeploymentState.FAILED;
    }

    @Override
    public void close(ServedDeployment model) {
        model.deployment().close();
    }

    /** The spec of one model's deployment: the multiplexed deployment's settings, for that model and version. */
    static DeploymentSpec modelSpec(DeploymentSpec multiplexed, String model, String version, int replicas) {
        ModelReference options = multiplexed.model();
        return new DeploymentSpec(model, new ModelReference(model, options.maxLength(), options.longInputs(),
                options.chunkOverlap(), options.chunkReduction(), options.maxChunksPerInput()), version, replicas,
                multiplexed.admission(), multiplexed.batching(), multiplexed.predictors(),
                multiplexed.health().withMinReadyReplicas(Math.min(1, multiplexed.health().minReadyReplicas())),
                multiplexed.rollout(), null, null, multiplexed.cache());
    }
}
