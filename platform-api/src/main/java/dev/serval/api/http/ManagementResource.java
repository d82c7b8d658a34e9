package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.api.config.ConfigParser;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.MultiplexedModels;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Deployment;
import dev.serval.repository.MultiplexedDeployment;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import io.smallrye.common.annotation.Blocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The management API: deployments as resources, and a whole config applied at once (Ray Serve's {@code serve deploy}).
 * Bodies are YAML or JSON with the config file's snake_case fields (docs/configuration.md). A change is checked in
 * full before anything happens; a refused change (400, message naming the field) leaves the deployments as they
 * were. Runs on worker threads: a delete waits for the deployment's replicas to drain. When
 * {@code serval.api.token} is set, every call needs it ({@link ApiToken}).
 */
@Path("/api")
@Blocking
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Management")
@ManagementApi
public class ManagementResource {

    private final Deployments changes;
    private final DeploymentRegistry deployments;
    private final RequestBodies bodies;

    ManagementResource(Deployments changes, DeploymentRegistry deployments, RequestBodies bodies) {
        this.changes = changes;
        this.deployments = deployments;
        this.bodies = bodies;
    }

    @GET
    @Path("/deployments")
    @Operation(summary = "Every deployment: its config and status (replicas per state, version, last error)")
    public Map<String, Object> list() {
        return Map.of("deployments", deployments.all().stream().map(ManagementResource::describe).toList());
    }

    @GET
    @Path("/deployments/{name}")
    @Operation(summary = "One deployment: config and status; 404 if unknown")
    public Map<String, Object> get(@PathParam("name") String name) {
        return describe(deployments.get(name));
    }

    @PUT
    @Path("/deployments/{name}")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Create (201) or replace (200) a deployment; fields not given take their defaults. A new "
            + "model or version rolls the replicas; replica counts and batching change in place")
    public Response put(@PathParam("name") String name, byte[] body) {
        String source = "PUT /api/deployments/" + name;
        DeploymentSpec config = ConfigParser.deployment(name, read(body, source), source);
        boolean created = changes.put(config, source);
        return Response.status(created ? 201 : 200).entity(describe(deployments.get(name))).build();
    }

    @PATCH
    @Path("/deployments/{name}")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Change some fields of a deployment (e.g. {\"num_replicas\": 3}); the others keep their values")
    public Map<String, Object> patch(@PathParam("name") String name, byte[] body) {
        String source = "PATCH /api/deployments/" + name;
        ServedDeployment current = deployments.get(name);
        changes.put(ConfigParser.merge(current.config(), read(body, source), source), source);
        return describe(deployments.get(name));
    }

    @DELETE
    @Path("/deployments/{name}")
    @Operation(summary = "Delete a deployment: new requests get 404 at once, admitted ones finish; returns once its "
            + "replicas stopped")
    public Map<String, Object> delete(@PathParam("name") String name) {
        changes.delete(name);
        return Map.of("deleted", name);
    }

    @GET
    @Path("/config")
    @Operation(summary = "The whole config now applied, as PUT /api/config takes it")
    public Map<String, Object> config() {
        return Map.of("deployments", deployments.all().stream().map(s -> ConfigParser.toMap(s.config())).toList());
    }

    @PUT
    @Path("/config")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Apply a whole config (YAML or JSON, like the config file): creates, changes, and deletes the "
            + "deployments it does not list. All or nothing")
    public Map<String, Object> apply(byte[] body) {
        String source = "PUT /api/config";
        List<DeploymentSpec> configs = ConfigParser.deployments(read(body, source), source);
        changes.apply(configs, source);
        return list();
    }

    private JsonNode read(byte[] body, String source) {
        byte[] checked = bodies.checkSize(body);
        if (checked.length == 0) {
            throw new ApiError(400, source + ": the request body is empty; send the deployment's fields as JSON or YAML");
        }
        return ConfigParser.read(new String(checked, StandardCharsets.UTF_8), source);
    }

    /** Config and status of one deployment. */
    static Map<String, Object> describe(ServedDeployment served) {
        if (served.multiplexed() != null) {
            return describe(served.multiplexed());
        }
        Deployment<?, ?> deployment = served.deployment();
        DeploymentStatus status = deployment.status();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("name", served.name());
        view.put("kind", served.kind().id());
        view.put("state", deployment.state().name());
        view.put("ready", served.ready());
        view.put("version", status.version());
        view.put("replicas", replicas(status));
        deployment.autoscaling().ifPresent(autoscaling -> view.put("autoscaling", autoscaling(autoscaling)));
        view.put("last_error", status.lastError());
        view.put("cache", cache(deployment.cache()));
        view.put("config", ConfigParser.toMap(served.config()));
        return view;
    }

    /**
     * The result cache now: {@code active} (on, for a kind that caches), {@code granted_bytes} (its bound: its
     * {@code max_bytes}, or its share of {@code serval.cache.max-bytes}), {@code bytes} and {@code entries} held, and
     * the inputs looked up ({@code lookups}) and found ({@code hits}) since the deployment was created.
     */
    static Map<String, Object> cache(DeploymentStatus.Cache cache) {
        return Map.of("active", cache.active(), "granted_bytes", cache.grantedBytes(), "bytes", cache.bytes(),
                "entries", cache.entries(), "hits", cache.hits(), "lookups", cache.lookups());
    }

    /**
     * Config and status of a multiplexed deployment: its replicas with the models each holds (most recently used
     * first), and every model asked for so far with its state.
     */
    static Map<String, Object> describe(MultiplexedModels models) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("name", models.name());
        view.put("kind", "multiplexed");
        view.put("state", "READY");
        view.put("ready", true);
        view.put("multiplex", multiplex(models));
        models.deployment().autoscaling().ifPresent(autoscaling -> view.put("autoscaling", autoscaling(autoscaling)));
        view.put("config", ConfigParser.toMap(models.config()));
        return view;
    }

    /**
     * {@code num_replicas} (now: the autoscaler's when autoscaled), {@code models_matching} (the repository's, as of
     * the last scan), {@code models_loaded} (summed over replicas), {@code replicas} (each
     * with its {@code models}), and {@code models}: each model asked for so far with its {@code version},
     * {@code kind}, {@code state}, {@code replicas} (those that hold it; empty when not loaded) and
     * {@code last_error}.
     */
    static Map<String, Object> multiplex(MultiplexedModels models) {
        MultiplexedDeployment<ServedDeployment> multiplexed = models.deployment();
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("num_replicas", multiplexed.replicas());
        view.put("models_matching", multiplexed.modelsMatching().size());
        view.put("models_loaded", multiplexed.modelsLoaded());
        List<List<String>> held = multiplexed.replicaModels();
        view.put("replicas", IntStream.range(0, held.size()).mapToObj(replica -> Map.of("replica", replica,
                "models", held.get(replica))).toList());
        List<Map<String, Object>> each = new java.util.ArrayList<>();
        for (ServedDeployment model : multiplexed.models()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", model.name());
            entry.put("version", model.config().version());
            entry.put("kind", model.kind().id());
            List<Integer> replicas = multiplexed.replicasOf(model.name());
            entry.put("state", !replicas.isEmpty() ? model.deployment().state().name()
                    : multiplexed.waitsForRoom(model.name()) ? "WAITING_FOR_ROOM" : "UNLOADED");
            entry.put("replicas", replicas);
            entry.put("last_error", model.deployment().failure().orElse(null));
            each.add(entry);
        }
        each.sort(java.util.Comparator.comparing(entry -> (String) entry.get("name")));
        view.put("models", each);
        view.put("not_served", multiplexed.notServed().stream().map(skipped -> Map.of("model", skipped.model(),
                "version", skipped.version(), "problem", skipped.problem())).toList());
        return view;
    }

    /**
     * The autoscaler's view: {@code ongoing_requests} (averaged over look_back_period; null before the first sample),
     * {@code wanted_replicas}, {@code reason}, and {@code last_decision} ({@code at}, {@code from}, {@code to},
     * {@code reason}; null before the first change).
     */
    static Map<String, Object> autoscaling(DeploymentStatus.Autoscaling autoscaling) {
        Map<String, Object> view = new LinkedHashMap<>();
        double ongoing = autoscaling.ongoingRequests();
        view.put("ongoing_requests", Double.isNaN(ongoing) ? null : Math.round(ongoing * 1000) / 1000.0);
        view.put("wanted_replicas", autoscaling.wantedReplicas());
        view.put("reason", autoscaling.reason());
        DeploymentStatus.Autoscaling.Change last = autoscaling.lastChange();
        Map<String, Object> decision = null;
        if (last != null) {
            decision = new LinkedHashMap<>();
            decision.put("at", last.at().toString());
            decision.put("from", last.from());
            decision.put("to", last.to());
            decision.put("reason", last.reason());
        }
        view.put("last_decision", decision);
        return view;
    }

    /** Replicas per state: {@code desired}, {@code starting}, {@code running}, {@code updating}, ... */
    static Map<String, Object> replicas(DeploymentStatus status) {
        Map<String, Object> replicas = new LinkedHashMap<>();
        replicas.put("desired", status.desired());
        replicas.put("starting", status.starting());
        replicas.put("running", status.running());
        replicas.put("updating", status.updating());
        replicas.put("stopping", status.stopping());
        replicas.put("recovering", status.recovering());
        return replicas;
    }
}
