package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.spec.DeploymentSpec;
import dev.serval.error.UnknownDeployment;
import dev.serval.predictor.Embedding;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The configured deployments. Built once at startup: every spec is validated first (a bad setting stops the
 * start with a message naming the deployment and field), then every deployment starts loading in the
 * background, so HTTP and liveness answer while models load and readiness turns UP when they are warm.
 * The name-to-deployment map is immutable after startup; request threads read it without locks.
 * On shutdown every replica drains its admitted requests (up to the graceful-shutdown timeout) and stops.
 */
@Singleton
public class Deployments {

    private static final Logger LOG = Logger.getLogger(Deployments.class);

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
        Map<String, DeploymentSpec> specs = new LinkedHashMap<>();
        config.deployments().forEach((name, settings) -> specs.put(name, settings.toSpec(name)));
        if (specs.isEmpty()) {
            LOG.warn("no deployments configured (serval.deployments.*): Serval serves nothing");
        }
        Map<String, ServedDeployment> started = new LinkedHashMap<>();
        engine = new ServingEngine(Duration.ofSeconds(1), System::nanoTime, java.time.InstantSource.system(), registry,
                config.failureMonitor().toSettings());
        specs.forEach((name, spec) -> {
            ServalConfig.Deployment settings = config.deployments().get(name);
            ModelSource source = sourceFor(name, settings.model());
            Deployment<String, Embedding> deployment =
                    engine.deploy(spec, current -> source.load(current.model(), settings));
            started.put(name, new ServedDeployment(deployment, new DeploymentMeters(deployment, registry),
                    settings.minReadyReplicas(), settings.requestTimeout()));
            LOG.infof("deployment '%s': starting %d replica(s) of %s (version %s), each %d predictor threads x %d "
                    + "intra-op threads", name, spec.numReplicas(), spec.model(), spec.version(),
                    spec.predictorThreads(), spec.intraOpThreads());
        });
        byName = Map.copyOf(started);
    }

    private ModelSource sourceFor(String deployment, String reference) {
        for (ModelSource source : sources) {
            if (source.accepts(reference)) {
                return source;
            }
        }
        throw new IllegalArgumentException("deployment '" + deployment + "': model '" + reference
                + "' is neither bundled:NAME nor a directory path");
    }

    void stop(@Observes ShutdownEvent event) {
        if (engine != null) {
            engine.close();
        }
    }

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
    public dev.serval.health.FailureMonitor failureMonitor() {
        return engine.failureMonitor();
    }
}
