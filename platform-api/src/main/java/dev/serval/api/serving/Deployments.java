package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.InvalidConfig;
import dev.serval.api.config.ServalConfig;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ModelLoader;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.UnknownDeployment;
import dev.serval.health.FailureMonitor;
import dev.serval.model.Model;
import dev.serval.model.ModelCatalog;
import dev.serval.model.ModelKind;
import dev.serval.model.NativeRuntime;
import dev.serval.multiplex.Multiplexer;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    private final ServalConfig config;
    private final Instance<ModelSource> sources;
    private final MeterRegistry registry;
    private final DeploymentRegistry deployments;
    private final AppliedConfigStore applied;
    private ServingEngine engine;

    Deployments(ServalConfig config, Instance<ModelSource> sources, MeterRegistry registry,
            DeploymentRegistry deployments) {
        this.config = config;
        this.sources = sources;
        this.registry = registry;
        this.deployments = deployments;
        this.applied = new AppliedConfigStore(config.stateDir());
    }

    void start(@Observes StartupEvent event) {
        selectOnnxRuntime();
        List<DeploymentSpec> initial = StartupConfigs.of(config, applied).load();
        initial.forEach(this::check);
        checkServerLimits(initial, "the initial deployments");
        checkAddresses(initial, "the initial deployments");
        if (initial.isEmpty()) {
            LOG.warn("no deployments configured: Serval serves nothing until the management API adds some");
        }
        engine = new ServingEngine(Duration.ofSeconds(1), System::nanoTime, InstantSource.system(), registry,
                failureMonitor(config.failureMonitor()), autoscalingPeriod(), cpuBudget());
        deployments.monitor(engine.failureMonitor());
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
        String choice = config.onnxruntime().library();
        NativeRuntime runtime;
        try {
            runtime = ModelCatalog.selectNativeRuntime(choice);
        } catch (IOException | IllegalStateException e) {
            throw new InvalidConfig("serval.onnxruntime.library", null, null, e.getMessage());
        }
        Gauge.builder("serval.onnxruntime.info", () -> 1)
                .description("The ONNX Runtime this process runs (version) under ONNX Runtime Java (java_api)")
                .tags("version", runtime.version(), "java_api", runtime.javaApi())
                .register(registry);
    }

    /** {@code serval.autoscaling.period}, checked: a bad value stops the start naming the property. */
    private Duration autoscalingPeriod() {
        Duration period = config.autoscaling().period();
        if (period.compareTo(Duration.ofMillis(10)) < 0 || period.compareTo(Duration.ofSeconds(10)) > 0) {
            throw new InvalidConfig("serval.autoscaling.period", null, null, "must be between 10ms and 10s, not "
                    + period);
        }
        return period;
    }

    /** {@code serval.multiplex.*}, checked. */
    private static FailureMonitor.Settings failureMonitor(ServalConfig.FailureMonitor monitor) {
        return new FailureMonitor.Settings(monitor.enabled(), monitor.window(), monitor.threshold(),
                monitor.minRequests(), monitor.maxReplacements());
    }

    private Multiplexer.Tuning multiplexTuning() {
        ServalConfig.Multiplex settings = config.multiplex();
        Duration period = settings.refreshPeriod();
        if (period.compareTo(Duration.ofMillis(100)) < 0 || period.compareTo(Duration.ofHours(1)) > 0) {
            throw new InvalidConfig("serval.multiplex.refresh-period", null, null, "must be between 100ms and 1h, not "
                    + period);
        }
        Duration residency = settings.minResidency();
        if (residency.isNegative() || residency.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new InvalidConfig("serval.multiplex.min-residency", null, null, "must be between 0s and 1m, not "
                    + residency);
        }
        int factor = settings.residencyFactor();
        if (factor < 0 || factor > 1000) {
            throw new InvalidConfig("serval.multiplex.residency-factor", null, null, "must be between 0 and 1000, not "
                    + factor);
        }
        return new Multiplexer.Tuning(period, residency, factor);
    }

    /** {@code serval.cpu-budget}, checked: a bad value stops the start naming the property. */
    private int cpuBudget() {
        int budget = config.cpuBudgetOrProcessors();
        if (budget < 1) {
            throw new InvalidConfig("serval.cpu-budget", null, null, "must be at least 1 thread, not " + budget);
        }
        return budget;
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
        checkServerLimits(after.values(), source);
        checkAddresses(after.values(), source);
        checkSteps(after.values(), source);
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
        checkServerLimits(configs, source);
        checkAddresses(configs, source);
        checkSteps(configs, source);
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

    private void check(DeploymentSpec next) {
        checkWith(next, "serval.deployments." + next.name());
    }

    /**
     * Refuses a set of deployments whose predictor threads together pass {@code serval.limits.max-predictor-threads},
     * naming the deployment that asks for the most.
     */
    private void checkServerLimits(Collection<DeploymentSpec> all, String source) {
        long threads = 0;
        DeploymentSpec largest = null;
        for (DeploymentSpec each : all) {
            long own = predictorThreads(each);
            threads += own;
            if (largest == null || own > predictorThreads(largest)) {
                largest = each;
            }
        }
        int limit = config.limits().maxPredictorThreads();
        if (threads > limit) {
            String replicas = largest.isAutoscaled() ? "autoscaling.max_replicas" : "num_replicas";
            String models = largest.isMultiplexed() ? " x max_models_per_replica" : "";
            throw new InvalidConfig(source, largest.name(), replicas, "the deployments would run " + threads
                    + " predictor threads (" + replicas + models + " x predictor_threads, this one "
                    + largest.maxReplicas() + (largest.isMultiplexed() ? " x "
                    + largest.multiplex().maxModelsPerReplica() : "") + " x "
                    + largest.predictors().predictorThreads() + "); the server allows " + limit
                    + " (serval.limits.max-predictor-threads)");
        }
    }

    /** The most predictor threads a deployment runs: each model a multiplexed replica holds has its own. */
    private static long predictorThreads(DeploymentSpec spec) {
        long models = spec.isMultiplexed() ? spec.multiplex().maxModelsPerReplica() : 1;
        return (long) spec.maxReplicas() * models * spec.predictors().predictorThreads();
    }

    /**
     * Refuses a set of deployments in which one name would have two addresses: a deployment whose name a multiplexed
     * deployment's glob matches, or a repository model that two multiplexed deployments' globs match.
     */
    private void checkAddresses(Collection<DeploymentSpec> all, String source) {
        List<DeploymentSpec> globs = all.stream().filter(DeploymentSpec::isMultiplexed).toList();
        if (globs.isEmpty()) {
            return;
        }
        Collection<String> models = repository().repository().models().keySet();
        for (int i = 0; i < globs.size(); i++) {
            DeploymentSpec glob = globs.get(i);
            String pattern = glob.model().name();
            if (MultiplexSpec.matches(pattern, glob.name())) {
                throw new InvalidConfig(source, glob.name(), "model", "the glob '" + glob.model().name()
                        + "' matches the deployment's own name: a model of that name could not be called by it; "
                        + "rename the deployment or narrow the glob");
            }
            for (DeploymentSpec other : all) {
                if (other != glob && MultiplexSpec.matches(pattern, other.name())) {
                    throw new InvalidConfig(source, glob.name(), "model", "the glob '" + glob.model().name()
                            + "' matches the name of deployment '" + other.name() + "': requests for '" + other.name()
                            + "' would have two deployments; rename it or narrow the glob");
                }
            }
            for (DeploymentSpec later : globs.subList(i + 1, globs.size())) {
                String second = later.model().name();
                for (String model : models) {
                    if (MultiplexSpec.matches(pattern, model) && MultiplexSpec.matches(second, model)) {
                        throw new InvalidConfig(source, later.name(), "model", "repository model '" + model
                                + "' matches both '" + glob.model().name() + "' (deployment '" + glob.name()
                                + "') and '" + later.model().name() + "'; a model is served by one deployment");
                    }
                }
            }
        }
    }

    /**
     * Refuses a pipeline whose steps are not among {@code all} (the deployments once the change is applied), that calls
     * itself, or that reaches itself through other pipelines (each would wait for the other to load, and a request
     * would never end). Whether the steps' tensors line up is checked when the pipeline loads, against the steps'
     * models.
     */
    private void checkSteps(Collection<DeploymentSpec> all, String source) {
        java.util.Set<String> names = new java.util.HashSet<>();
        all.forEach(spec -> names.add(spec.name()));
        Map<String, List<String>> pipelines = new LinkedHashMap<>();
        java.util.Set<String> multiplexed = new java.util.HashSet<>();
        all.stream().filter(DeploymentSpec::isMultiplexed).forEach(spec -> multiplexed.add(spec.name()));
        for (DeploymentSpec spec : all) {
            List<List<String>> steps = stepsOf(spec);
            if (steps.isEmpty()) {
                continue;
            }
            for (int i = 0; i < steps.size(); i++) {
                for (String step : steps.get(i)) {
                    if (step.equals(spec.name()) || !names.contains(step)) {
                        throw new InvalidConfig(source, spec.name(), "model", "pipeline '" + spec.model().name()
                                + "' step " + (i + 1) + " calls deployment '" + step + "', " + (step.equals(spec.name())
                                ? "the pipeline itself" : "which is not deployed (deployments: "
                                + String.join(", ", names.stream().sorted().toList()) + ")"));
                    }
                    if (multiplexed.contains(step)) {
                        throw new InvalidConfig(source, spec.name(), "model", "pipeline '" + spec.model().name()
                                + "' step " + (i + 1) + " calls deployment '" + step + "', which is multiplexed (it "
                                + "serves many models, each by its own name); a step calls a deployment of one model");
                    }
                }
            }
            pipelines.put(spec.name(), steps.stream().flatMap(List::stream).toList());
        }
        for (String start : pipelines.keySet()) {
            List<String> loop = cycle(start, pipelines, new java.util.ArrayList<>(List.of(start)));
            if (loop != null) {
                throw new InvalidConfig(source, start, "model", "pipelines call each other in a loop: "
                        + String.join(" -> ", loop));
            }
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

    /** The path from {@code path}'s last pipeline back to {@code start} through pipeline steps, or null. */
    private static List<String> cycle(String start, Map<String, List<String>> pipelines, List<String> path) {
        if (path.size() > pipelines.size() + 1) {
            return null;
        }
        for (String step : pipelines.getOrDefault(path.getLast(), List.of())) {
            if (step.equals(start)) {
                List<String> loop = new java.util.ArrayList<>(path);
                loop.add(start);
                return loop;
            }
            if (pipelines.containsKey(step) && !path.contains(step)) {
                path.add(step);
                List<String> found = cycle(start, pipelines, path);
                if (found != null) {
                    return found;
                }
                path.removeLast();
            }
        }
        return null;
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
            RepositoryModelSource repository = repository();
            MultiplexedModels models = new MultiplexedModels(initial, engine, registry, repository.repository(),
                    repository, multiplexTuning());
            LOG.infof("deployment '%s': serving the repository models matching '%s' (%d now), on %d replica(s) of "
                    + "at most %d models each", initial.name(), initial.model().name(),
                    models.multiplexer().candidates().size(), initial.numReplicas(),
                    initial.multiplex().maxModelsPerReplica());
            return new ServedDeployment(models);
        }
        ModelSource source = sourceFor(initial, "serval");
        ModelKind kind = source.kind(initial);
        DeploymentSpec spec = initial;
        Deployment<Object, Object> deployment;
        try {
            deployment = engine.deploy(spec, loader(source, kind), kind.inputsBeforeLoad());
        } catch (IllegalArgumentException e) {
            throw new Conflict("deployment '" + initial.name()
                    + "' is still shutting down after a delete; try again when it is gone");
        }
        ServedDeployment served = new ServedDeployment(deployment, new RequestMeters(deployment, registry), kind,
                initial);
        LOG.infof("deployment '%s': starting %d replica(s) of %s version %s (%s), each %d predictor threads x %d "
                + "intra-op threads", initial.name(), spec.numReplicas(), initial.model().name(), spec.version(), kind.id(),
                spec.predictors().predictorThreads(), spec.predictors().intraOpThreads());
        return served;
    }

    /**
     * The loader of a deployment served by {@code source}: it loads exactly the spec the engine hands it (its model
     * reference carries the loader options), never the deployment's current config, which may have moved on to
     * another version while the replica was starting. A custom handler ({@code kind: java}) is loaded once per
     * replica (its own instance and class loader); every other kind once per version.
     */
    static ModelLoader<Object, Object> loader(ModelSource source, ModelKind kind) {
        boolean perReplica = kind == ModelKind.JAVA;
        return new ModelLoader<>() {
            @Override
            @SuppressWarnings("unchecked")
            public Model<Object, Object> load(DeploymentSpec spec) throws Exception {
                return (Model<Object, Object>) source.load(spec);
            }

            @Override
            public boolean perReplica() {
                return perReplica;
            }
        };
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
        served.deployment().update(after);
        LOG.infof("deployment '%s': %s", next.name(), before.sameReplicaShape(after)
                ? "changed in place (" + after.numReplicas() + " replica(s))"
                : "rolling to " + next.model().name() + " version " + next.version() + ", "
                        + after.rollingUpdateBatch() + " replica(s) at a time");
    }

    /** Under the lock: makes {@code changed} the deployments requests see, and stores their configs. */
    private void publish(Map<String, ServedDeployment> changed) {
        deployments.publish(changed);
        applied.write(changed.values().stream().map(ServedDeployment::config).toList());
    }
}
