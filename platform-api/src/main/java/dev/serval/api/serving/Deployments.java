package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.InvalidConfig;
import dev.serval.api.config.ServalConfig;
import dev.serval.api.repository.ModelKind;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ModelLoader;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.UnknownDeployment;
import dev.serval.health.FailureMonitor;
import dev.serval.predictor.Model;
import dev.serval.spec.DeploymentSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * The deployments this server runs, and every change to them.
 *
 * <p>At startup the deployments come from, in this order of precedence: the state directory's last applied config
 * (a restart resumes what the management API set), the YAML config file ({@code serval.config-file}), the
 * {@code serval.deployments.*} properties. Every config is checked first (fields, and that its model exists in the
 * repository with a valid descriptor); a bad one stops the start with a message naming the source, deployment and
 * field. Models then load in the background: HTTP and liveness answer while they do.
 *
 * <p>At run time the management API creates, changes and deletes deployments, or applies a whole config (Ray's
 * {@code serve deploy}: deployments not in it are deleted). A change is checked completely before anything is
 * touched, so a refused change leaves every deployment as it was. A change of replica count, admission limits or
 * batching applies in place; a change of model, version or loader options rolls the replicas without dropping
 * requests. Changes are serialised (one at a time); request threads read an immutable name-to-deployment map
 * without locks.
 */
@Singleton
public class Deployments {

    private static final Logger LOG = Logger.getLogger(Deployments.class);
    /** The state directory's file. */
    static final String STATE_FILE = "applied-config.yaml";

    private final ServalConfig config;
    private final Instance<ModelSource> sources;
    private final MeterRegistry registry;
    private volatile Map<String, ServedDeployment> byName = Map.of();
    private ServingEngine engine;

    Deployments(ServalConfig config, Instance<ModelSource> sources, MeterRegistry registry) {
        this.config = config;
        this.sources = sources;
        this.registry = registry;
    }

    void start(@Observes StartupEvent event) {
        List<DeploymentSpec> initial = initialConfigs();
        initial.forEach(this::check);
        checkServerLimits(initial, "the initial deployments");
        if (initial.isEmpty()) {
            LOG.warn("no deployments configured: Serval serves nothing until the management API adds some");
        }
        engine = new ServingEngine(Duration.ofSeconds(1), System::nanoTime, InstantSource.system(), registry,
                config.failureMonitor().toSettings());
        synchronized (this) {
            Map<String, ServedDeployment> started = new LinkedHashMap<>();
            initial.forEach(c -> started.put(c.name(), create(c)));
            byName = java.util.Collections.unmodifiableMap(started);
        }
    }

    private List<DeploymentSpec> initialConfigs() {
        Optional<Path> state = config.stateDir().map(dir -> dir.resolve(STATE_FILE)).filter(Files::isRegularFile);
        if (state.isPresent()) {
            LOG.infof("deployments from the last applied config %s", state.get());
            return ConfigParser.readFile(state.get());
        }
        if (config.configFile().isPresent()) {
            LOG.infof("deployments from the config file %s", config.configFile().get());
            return ConfigParser.readFile(config.configFile().get());
        }
        return ConfigParser.fromProperties(config.deployments());
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
        byName.forEach((name, served) -> after.put(name, served.config()));
        after.put(next.name(), next);
        checkServerLimits(after.values(), source);
        ServedDeployment current = byName.get(next.name());
        Map<String, ServedDeployment> changed = new LinkedHashMap<>(byName);
        if (current == null) {
            changed.put(next.name(), create(next));
        } else {
            update(current, next);
        }
        byName = java.util.Collections.unmodifiableMap(changed);
        persist();
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
        byName = java.util.Collections.unmodifiableMap(changed);
        persist();
        removed.forEach(this::close);
    }

    /**
     * Deletes a deployment: new requests get 404 at once; admitted ones finish (graceful-shutdown timeout); returns
     * when its replicas stopped.
     *
     * @throws UnknownDeployment when there is none of that name
     */
    public void delete(String name) {
        ServedDeployment removed;
        synchronized (this) {
            removed = get(name);
            Map<String, ServedDeployment> changed = new LinkedHashMap<>(byName);
            changed.remove(name);
            byName = java.util.Collections.unmodifiableMap(changed);
            persist();
        }
        close(removed);
    }

    private void close(ServedDeployment served) {
        LOG.infof("deployment '%s': deleting (draining admitted requests)", served.name());
        served.deployment().close();
    }

    private void check(DeploymentSpec next) {
        checkWith(next, "serval.deployments." + next.name());
    }

    /**
     * Refuses a set of deployments whose predictor threads together pass {@code serval.limits.max-predictor-threads},
     * naming the deployment that asks for the most.
     */
    private void checkServerLimits(java.util.Collection<DeploymentSpec> all, String source) {
        long threads = 0;
        DeploymentSpec largest = null;
        for (DeploymentSpec each : all) {
            long own = (long) each.numReplicas() * each.predictors().predictorThreads();
            threads += own;
            if (largest == null || own > (long) largest.numReplicas() * largest.predictors().predictorThreads()) {
                largest = each;
            }
        }
        int limit = config.limits().maxPredictorThreads();
        if (threads > limit) {
            throw new InvalidConfig(source, largest.name(), "num_replicas", "the deployments would run " + threads
                    + " predictor threads (num_replicas x predictor_threads, this one " + largest.numReplicas() + " x "
                    + largest.predictors().predictorThreads() + "); the server allows " + limit
                    + " (serval.limits.max-predictor-threads)");
        }
    }

    /** Everything that could make {@code next} fail to apply, checked before anything changes. */
    private void checkWith(DeploymentSpec next, String source) {
        ModelKind kind = kindOf(next, source);
        ServedDeployment current = byName.get(next.name());
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
        ModelSource source = sourceFor(initial, "serval");
        ModelKind kind = source.kind(initial);
        DeploymentSpec spec = initial;
        Deployment<Object, Object> deployment;
        try {
            deployment = engine.deploy(spec, loader(source));
        } catch (IllegalArgumentException e) {
            throw new dev.serval.api.http.ApiError(409, "deployment '" + initial.name()
                    + "' is still shutting down after a delete; try again when it is gone");
        }
        ServedDeployment served = new ServedDeployment(deployment, new DeploymentMeters(deployment, registry), kind,
                initial);
        LOG.infof("deployment '%s': starting %d replica(s) of %s version %s (%s), each %d predictor threads x %d "
                + "intra-op threads", initial.name(), spec.numReplicas(), initial.model().name(), spec.version(), kind.id(),
                spec.predictors().predictorThreads(), spec.predictors().intraOpThreads());
        return served;
    }

    /**
     * The loader of a deployment served by {@code source}: it loads exactly the spec the engine hands it (its model
     * reference carries the loader options), never the deployment's current config, which may have moved on to
     * another version while the replica was starting.
     */
    @SuppressWarnings("unchecked")
    static ModelLoader<Object, Object> loader(ModelSource source) {
        return spec -> (Model<Object, Object>) source.load(spec.model(), spec);
    }

    private static void update(ServedDeployment served, DeploymentSpec next) {
        DeploymentSpec before = served.deployment().spec();
        DeploymentSpec after = next;
        served.config(next);
        served.deployment().update(after);
        LOG.infof("deployment '%s': %s", next.name(), before.sameReplicaShape(after)
                ? "changed in place (" + after.numReplicas() + " replica(s))"
                : "rolling to " + next.model().name() + " version " + next.version() + ", "
                        + after.rollingUpdateBatch() + " replica(s) at a time");
    }

    /** Writes the current configs to the state directory (atomically), when one is configured. */
    private void persist() {
        Optional<Path> dir = config.stateDir();
        if (dir.isEmpty()) {
            return;
        }
        List<DeploymentSpec> configs = byName.values().stream().map(ServedDeployment::config).toList();
        try {
            Files.createDirectories(dir.get());
            Path partial = Files.createTempFile(dir.get(), STATE_FILE, ".partial");
            Files.writeString(partial, ConfigParser.toYaml(configs));
            Files.move(partial, dir.get().resolve(STATE_FILE), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the applied config into " + dir.get(), e);
        }
    }

    // --- reads -----------------------------------------------------------------------------------------------------

    /**
     * The deployment serving model {@code name}.
     *
     * @throws UnknownDeployment when none is configured under that name
     */
    public ServedDeployment get(String name) {
        ServedDeployment served = byName.get(name);
        if (served == null) {
            throw new UnknownDeployment(name);
        }
        return served;
    }

    public Optional<ServedDeployment> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public Collection<ServedDeployment> all() {
        return byName.values();
    }

    /** True when every deployment has at least its {@code min-ready-replicas} routable (and one exists). */
    public boolean allReady() {
        Collection<ServedDeployment> all = byName.values();
        if (all.isEmpty()) {
            return false;
        }
        for (ServedDeployment served : all) {
            if (!served.ready()) {
                return false;
            }
        }
        return true;
    }

    /** True once every deployment has served at least once (startup probe). */
    public boolean allStarted() {
        Collection<ServedDeployment> all = byName.values();
        if (all.isEmpty()) {
            return false;
        }
        for (ServedDeployment served : all) {
            if (!served.deployment().hasServed()) {
                return false;
            }
        }
        return true;
    }

    /** The engine's failure monitor, for liveness. */
    public FailureMonitor failureMonitor() {
        return engine.failureMonitor();
    }
}
