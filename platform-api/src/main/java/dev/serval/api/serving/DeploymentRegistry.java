package dev.serval.api.serving;

import dev.serval.deployment.ServingEngine;
import dev.serval.error.InvalidInput;
import dev.serval.error.UnknownDeployment;
import jakarta.inject.Singleton;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The deployments this server runs, by name, for everything that reads them: request threads, metadata, status and
 * health. Changes go through {@link Deployments}.
 *
 * <p>Design. {@link #byName} is an immutable map, replaced whole by {@link Deployments} (under its lock, one change at
 * a time) and read without locks: a request costs one volatile read and one hash lookup. {@link #engine} is set once,
 * when the engine starts. Readiness and liveness read flags and snapshots the engine publishes; nothing here blocks.
 */
@Singleton
public class DeploymentRegistry {

    /** Deployments a 404 names at most. */
    static final int NAMED_IN_A_404 = 10;


    /** The header with which a request to a multiplexed deployment's own path names its model (Ray Serve's way). */
    public static final String MODEL_ID_HEADER = "serval-model-id";

    private volatile Map<String, ServedDeployment> byName = Map.of();
    /** The multiplexed deployments among {@link #byName}, in order: published with it. */
    private volatile MultiplexedModels[] multiplexed = new MultiplexedModels[0];
    private volatile ServingEngine engine;

    /** {@link Deployments} only, under its lock: the deployments from now on, in the order given. */
    void publish(Map<String, ServedDeployment> deployments) {
        byName = Collections.unmodifiableMap(new LinkedHashMap<>(deployments));
        multiplexed = deployments.values().stream().map(ServedDeployment::multiplexed)
                .filter(java.util.Objects::nonNull).toArray(MultiplexedModels[]::new);
    }

    /**
     * The deployment that serves a request for model {@code name}: the deployment of that name, or, for a model a
     * multiplexed deployment's glob matches, that model's deployment, neither pinned nor loaded: the request pins it
     * ({@link ServedDeployment#pin()}) once it is valid and about to run, and releases it once it ended. A request to a
     * multiplexed deployment's own name names its model with {@code modelId} (the {@value #MODEL_ID_HEADER} header).
     *
     * @param modelId the {@value #MODEL_ID_HEADER} header, or null
     * @return null when nothing serves {@code name}
     * @throws InvalidInput      when {@code name} is a multiplexed deployment and no model is named
     * @throws UnknownDeployment when {@code name} is a multiplexed deployment that serves no model {@code modelId}
     */
    public ServedDeployment route(String name, String modelId) {
        ServedDeployment served = byName.get(name);
        if (served != null) {
            MultiplexedModels models = served.multiplexed();
            if (models == null) {
                return served;
            }
            if (modelId == null || modelId.isEmpty()) {
                throw new InvalidInput(MODEL_ID_HEADER, "deployment '" + name + "' is multiplexed: "
                        + "name one of its models in the path (/v2/models/<model>/infer, \"model\": \"<model>\") or "
                        + "in the " + MODEL_ID_HEADER + " header");
            }
            ServedDeployment model = models.model(modelId);
            if (model == null) {
                throw new UnknownDeployment(modelId); // not the deployments: one of this deployment's models
            }
            return model;
        }
        // Only names the glob matches are in a multiplexed deployment's models: two map lookups, no matching.
        for (MultiplexedModels models : multiplexed) {
            ServedDeployment model = models.model(name);
            if (model != null) {
                return model;
            }
        }
        return null;
    }

    /**
     * The deployment of one model named {@code name}, or null (none, or a multiplexed deployment): the request path's
     * first look, which needs no header.
     */
    public ServedDeployment plain(String name) {
        ServedDeployment served = byName.get(name);
        return served != null && served.multiplexed() == null ? served : null;
    }

    /** The multiplexed deployment whose glob matches model {@code name}, or null. */
    public MultiplexedModels multiplexing(String name) {
        for (MultiplexedModels models : multiplexed) {
            if (models.globMatches(name)) {
                return models;
            }
        }
        return null;
    }

    /** {@link Deployments} only, once at startup: the engine, whose failure monitor makes the node's liveness. */
    void engine(ServingEngine started) {
        engine = started;
    }

    /** The current name-to-deployment map (immutable), for a change to start from. */
    Map<String, ServedDeployment> byName() {
        return byName;
    }

    /**
     * The deployment serving model {@code name}.
     *
     * @throws UnknownDeployment when none is configured under that name
     */
    public ServedDeployment get(String name) {
        ServedDeployment served = byName.get(name);
        if (served == null) {
            throw unknown(name);
        }
        return served;
    }

    /**
     * The refusal of a request for {@code name}, which nothing serves: its message names the first
     * {@value #NAMED_IN_A_404} deployments, in the order they were configured, and how many more there are. Names of
     * deployments only: a multiplexed deployment's models are not listed (with {@code serval.multiplex.private} not
     * even their number leaks).
     */
    public UnknownDeployment unknown(String name) {
        Map<String, ServedDeployment> current = byName;
        List<String> named = current.keySet().stream().limit(NAMED_IN_A_404).toList();
        return new UnknownDeployment(name, named, current.size() - named.size());
    }

    public Optional<ServedDeployment> find(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    /** Every deployment, in the order they were configured (immutable). */
    public Collection<ServedDeployment> all() {
        return byName.values();
    }

    /**
     * True when every deployment has at least its {@code min-ready-replicas} routable, or is autoscaled to zero or
     * starting from zero ({@link ServedDeployment#readyForServer()}), and one exists.
     */
    public boolean allReady() {
        Collection<ServedDeployment> all = byName.values();
        if (all.isEmpty()) {
            return false;
        }
        for (ServedDeployment served : all) {
            if (!served.readyForServer()) {
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
            if (served.multiplexed() == null && !served.deployment().started()) {
                return false;
            }
        }
        return true;
    }

    /** False once the failure monitor gave up on this node (a deployment kept failing after its replicas were replaced). */
    public boolean live() {
        return engine.live();
    }

    /** Why the failure monitor gave up on this node, or null while {@link #live()}. */
    public String notLiveReason() {
        return engine.notLiveReason();
    }

    /** Whether the failure monitor watches the deployments at all ({@code serval.failure-monitor.enabled}). */
    public boolean failureMonitorEnabled() {
        return engine.settings().failureMonitorEnabled();
    }
}
