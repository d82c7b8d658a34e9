package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.InvalidConfig;
import dev.serval.api.config.ServalConfig;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.UnknownDeployment;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.InvalidSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * Every change to the deployments this server runs, and their lifecycle; {@link DeploymentRegistry} is where they
 * are read.
 *
 * <p>At startup the deployments come from {@link StartupConfigs} (the last applied config, the config file or the
 * properties). Every config is checked first (fields, and that its model exists in the repository with a valid
 * descriptor); a bad one stops the start with a message naming the source, deployment and field. Models then load
 * in the background: HTTP and liveness answer while they do.
 *
 * <p>At run time the management API creates, changes and deletes deployments, or applies a whole config (Ray's
 * {@code serve deploy}: deployments not in it are deleted). A change is checked completely before anything is
 * touched, so a refused change leaves every deployment as it was. A change of replica count, admission limits or
 * batching applies in place; a change of model, version or loader options rolls the replicas without dropping
 * requests. Changes are serialised (one at a time, under this object's lock); each publishes the new
 * name-to-deployment map to the registry and stores the applied configs ({@link AppliedConfigStore}).
 */
@Singleton
public class Deployments {

    private static final Logger LOG = Logger.getLogger(Deployments.class);
    /** How long a change waits for the controller to apply it before its answer is written. */
    private static final long APPLY_WAIT_SECONDS = 10;

    private final ServalConfig config;
    private final Instance<ModelSource> sources;
    private final MeterRegistry registry;
    private final DeploymentRegistry deployments;
    private final AppliedConfigStore applied;
    private final DeploymentSetRules rules;
    private ServingEngine engine;

    Deployments(ServalConfig config, Instance<ModelSource> sources, MeterRegistry registry,
            DeploymentRegistry deployments) {
        this.config = config;
        this.sources = sources;
        this.registry = registry;
        this.deployments = deployments;
        this.applied = new AppliedConfigStore(config.stateDir());
        this.rules = new DeploymentSetRules(config.limits().maxPredictorThreads(),
                () -> repository().repository().models().keySet(), this::stepsOf);
    }

    /** A refused configuration stops the start with its one-line message, no stack trace (InvalidConfig#stopsStart). */
    void start(@Observes StartupEvent event) {
        List<DeploymentSpec> initial;
        try {
            selectOnnxRuntime();
            StartupConfigs startup = StartupConfigs.of(config, applied);
            initial = startup.load();
            initial.forEach(spec -> checkWith(spec, startup.source(spec.name())));
            rules.limits(initial, "the initial deployments");
            rules.addresses(initial, "the initial deployments");
        } catch (InvalidConfig e) {
            throw e.stopsStart();
        }
        if (initial.isEmpty()) {
            LOG.warn("no deployments configured: Serval serves nothing until the management API adds some");
        }
        engine = startEngine();
        deployments.engine(engine);
        synchronized (this) {
            Map<String, ServedDeployment> started = new LinkedHashMap<>();
            initial.forEach(c -> started.put(c.name(), create(c)));
            deployments.publish(started);
        }
    }

    /**
     * {@code serval.onnxruntime.library}, before any model loads: ONNX Runtime's native library is loaded once per
     * process. Published as {@code serval_onnxruntime_info{version, java_api}}.
     */
    private void selectOnnxRuntime() {
        try {
            ServingEngine.selectNativeRuntime(config.onnxruntime().library(), registry);
        } catch (InvalidSpec e) {
            throw new InvalidConfig(e.field(), null, null, e.problem());
        }
    }

    /**
     * The engine, started with the server's {@code serval.*} settings: the engine's builder checks their bounds, and a
     * bad value stops the start naming the property.
     */
    private ServingEngine startEngine() {
        ServalConfig.FailureMonitor monitor = config.failureMonitor();
        ServalConfig.Multiplex multiplex = config.multiplex();
        try {
            return ServingEngine.builder(registry)
                    .autoscaling(config.autoscaling().period(), config.cpuBudgetOrProcessors())
                    .failureMonitor(monitor.enabled(), monitor.window(), monitor.threshold(), monitor.minRequests(),
                            monitor.maxReplacements())
                    .multiplex(multiplex.refreshPeriod(), multiplex.minResidency(), multiplex.residencyFactor())
                    .cacheMaxBytes(config.cache().maxBytes().asLongValue())
                    .start();
        } catch (InvalidSpec e) {
            throw new InvalidConfig(e.field(), null, null, e.problem());
        }
    }

    void stop(@Observes ShutdownEvent event) {
        if (engine != null) {
            engine.close();
        }
    }

    // --- changes ---------------------------------------------------------------------------------------------------

    /**
     * Creates the deployment, or changes it to {@code next}.
     *
     * @return true when it was created
     * @throws InvalidConfig when the config cannot be applied; nothing changed then
     */
    public synchronized boolean put(DeploymentSpec next, String source) {
        checkWith(next, source);
        Map<String, DeploymentSpec> after = new LinkedHashMap<>();
        Map<String, ServedDeployment> byName = deployments.byName();
        byName.forEach((name, served) -> after.put(name, served.config()));
        after.put(next.name(), next);
        rules.limits(after.values(), source);
        rules.addresses(after.values(), source);
        rules.steps(after.values(), source);
        ServedDeployment current = byName.get(next.name());
        Map<String, ServedDeployment> changed = new LinkedHashMap<>(byName);
        if (current == null) {
            changed.put(next.name(), create(next));
        } else {
            update(current, next);
        }
        publish(changed);
        return current == null;
    }

    /**
     * Makes the deployments exactly {@code configs}: creates, changes, and deletes those not listed.
     *
     * @throws InvalidConfig when any config cannot be applied; nothing changed then
     */
    public synchronized void apply(List<DeploymentSpec> configs, String source) {
        configs.forEach(c -> checkWith(c, source));
        rules.limits(configs, source);
        rules.addresses(configs, source);
        rules.steps(configs, source);
        Map<String, ServedDeployment> byName = deployments.byName();
        Map<String, ServedDeployment> changed = new LinkedHashMap<>();
        for (DeploymentSpec next : configs) {
            ServedDeployment current = byName.get(next.name());
            if (current == null) {
                changed.put(next.name(), create(next));
            } else {
                update(current, next);
                changed.put(next.name(), current);
            }
        }
        List<ServedDeployment> removed = byName.values().stream().filter(s -> !changed.containsKey(s.name())).toList();
        publish(changed);
        removed.forEach(this::close);
    }

    /**
     * Deletes a deployment: new requests get 404 at once; admitted ones finish (graceful-shutdown timeout); returns
     * when its replicas stopped.
     *
     * @throws UnknownDeployment when there is none of that name
     * @throws Conflict          when a pipeline calls it (the pipeline would fail every request, and could not load
     *                           after a restart); nothing changed then
     */
    public void delete(String name) {
        ServedDeployment removed;
        synchronized (this) {
            removed = deployments.get(name);
            List<String> callers = deployments.all().stream()
                    .filter(other -> !other.name().equals(name) && callsStep(other.config(), name))
                    .map(ServedDeployment::name).sorted().toList();
            if (!callers.isEmpty()) {
                throw new Conflict("deployment '" + name + "' is a step of pipeline(s) " + String.join(", ", callers)
                        + "; delete or change them first");
            }
            Map<String, ServedDeployment> changed = new LinkedHashMap<>(deployments.byName());
            changed.remove(name);
            publish(changed);
        }
        close(removed);
    }

    private void close(ServedDeployment served) {
        LOG.infof("deployment '%s': deleting (draining admitted requests)", served.name());
        if (served.multiplexed() != null) {
            served.multiplexed().close();
        } else {
            served.deployment().close();
        }
    }

    /** Whether {@code spec} is a pipeline one of whose steps calls deployment {@code step}. */
    private boolean callsStep(DeploymentSpec spec, String step) {
        return stepsOf(spec).stream().anyMatch(each -> each.contains(step));
    }

    /**
     * The deployments each step of the pipeline {@code spec} deploys may call, in step order; empty when it deploys
     * another kind (or a model that does not resolve).
     */
    private List<List<String>> stepsOf(DeploymentSpec spec) {
        if (spec.isMultiplexed() || !sourceFor(spec, "serval").equals(repository())) {
            return List.of();
        }
        try {
            return repository().repository().resolve(spec.model().name(), spec.version()).steps();
        } catch (IllegalArgumentException e) {
            return List.of(); // refused with its own message by checkWith
        }
    }

    /** The model repository's source (multiplexed deployments serve its models). */
    private RepositoryModelSource repository() {
        for (ModelSource candidate : sources) {
            if (candidate instanceof RepositoryModelSource repository) {
                return repository;
            }
        }
        throw new IllegalStateException("no model repository");
    }

    /** Everything that could make {@code next} fail to apply, checked before anything changes. */
    private void checkWith(DeploymentSpec next, String source) {
        ServedDeployment current = deployments.byName().get(next.name());
        if (current != null && next.isMultiplexed() != (current.multiplexed() != null)) {
            throw new InvalidConfig(source, next.name(), "model", "deployment '" + next.name() + "' serves "
                    + (current.multiplexed() != null ? "the models matching '" + current.config().model().name() + "'"
                    : "one model") + "; delete it and create it again to change between one model and a glob");
        }
        if (next.isMultiplexed()) {
            if (current != null && !current.config().model().name().equals(next.model().name())) {
                throw new InvalidConfig(source, next.name(), "model", "the glob of a multiplexed deployment stays "
                        + "what it was created with ('" + current.config().model().name() + "'); delete the "
                        + "deployment and create it again to change it");
            }
            return; // its models are checked when they load; its names in checkAddresses
        }
        ModelKind kind = kindOf(next, source);
        if (current != null && current.kind() != kind) {
            throw new InvalidConfig(source, next.name(), "model", "'" + next.model().name() + "' is a " + kind.id()
                    + " model but the deployment serves a " + current.kind().id() + " model; delete the deployment "
                    + "and create it again to change its kind");
        }
    }

    private ModelKind kindOf(DeploymentSpec next, String source) {
        try {
            return sourceFor(next, source).kind(next);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfig(source, next.name(), "model", e.getMessage());
        }
    }

    private ModelSource sourceFor(DeploymentSpec next, String source) {
        for (ModelSource candidate : sources) {
            if (candidate.accepts(next.model().name())) {
                return candidate;
            }
        }
        throw new InvalidConfig(source, next.name(), "model", "'" + next.model().name()
                + "' is not a model name of the repository");
    }

    private ServedDeployment create(DeploymentSpec initial) {
        if (initial.isMultiplexed()) {
            MultiplexedModels models = new MultiplexedModels(initial, repository().multiplex(initial, engine, model ->
                    new ServedDeployment(model, new RequestMeters(model.deployment(), registry, model.kind()))));
            LOG.infof("deployment '%s': serving the repository models matching '%s' (%d now), on %d replica(s) of "
                    + "at most %d models each", initial.name(), initial.model().name(),
                    models.deployment().modelsMatching().size(), initial.numReplicas(),
                    initial.multiplex().maxModelsPerReplica());
            return new ServedDeployment(models);
        }
        ModelSource source = sourceFor(initial, "serval");
        ModelKind kind = source.kind(initial);
        DeploymentSpec spec = initial;
        Deployment<Object, Object> deployment;
        try {
            deployment = engine.deploy(spec, loading -> load(source, loading), kind);
        } catch (IllegalArgumentException e) {
            throw new Conflict("deployment '" + initial.name()
                    + "' is still shutting down after a delete; try again when it is gone");
        }
        ServedDeployment served = new ServedDeployment(deployment, new RequestMeters(deployment, registry, kind), kind,
                initial);
        LOG.infof("deployment '%s': starting %d replica(s) of %s version %s (%s), each %d predictor threads x %d "
                + "intra-op threads", initial.name(), spec.numReplicas(), initial.model().name(), spec.version(), kind.id(),
                spec.predictors().predictorThreads(), spec.predictors().intraOpThreads());
        return served;
    }

    /**
     * How the engine loads a deployment served by {@code source}: exactly the spec it hands over (its model reference
     * carries the loader options), never the deployment's current config, which may have moved on to another version
     * while the replica was starting. Whether each replica loads its own is the engine's to say, by the model's kind.
     */
    @SuppressWarnings("unchecked")
    static Model<Object, Object> load(ModelSource source, DeploymentSpec spec) throws Exception {
        return (Model<Object, Object>) source.load(spec);
    }

    private static void update(ServedDeployment served, DeploymentSpec next) {
        if (served.multiplexed() != null) {
            served.config(next);
            served.multiplexed().update(next);
            LOG.infof("deployment '%s': changed in place (%d replica(s) of at most %d models)", next.name(),
                    next.numReplicas(), next.multiplex().maxModelsPerReplica());
            return;
        }
        DeploymentSpec before = served.deployment().spec();
        DeploymentSpec after = next;
        served.config(next);
        awaitApplied(next.name(), served.deployment().update(after));
        LOG.infof("deployment '%s': %s", next.name(), before.sameReplicaShape(after)
                ? "changed in place (" + after.numReplicas() + " replica(s))"
                : "rolling to " + next.model().name() + " version " + next.version() + ", "
                        + after.rollingUpdateBatch() + " replica(s) at a time");
    }

    /**
     * Waits, briefly, until the controller has applied a change (it does so right away, on its own thread), so that
     * what the management API answers is the status the change caused. The change stands whatever the wait gives.
     */
    private static void awaitApplied(String name, CompletableFuture<Void> applied) {
        try {
            applied.get(APPLY_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (TimeoutException e) {
            LOG.warnf("deployment '%s': the controller has not applied the change after %d s; it will", name,
                    APPLY_WAIT_SECONDS);
        } catch (ExecutionException e) {
            LOG.warnf("deployment '%s': the controller did not apply the change: %s", name, e.getCause());
        }
    }

    /** Under the lock: makes {@code changed} the deployments requests see, and stores their configs. */
    private void publish(Map<String, ServedDeployment> changed) {
        deployments.publish(changed);
        applied.write(changed.values().stream().map(ServedDeployment::config).toList());
    }
}
