package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.serval.api.config.ConfigParser;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.MultiplexedModels;
import dev.serval.api.serving.RepositoryModelSource;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.repository.ModelRepository;
import io.smallrye.common.annotation.Blocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The Open Inference Protocol model repository extension: list the repository, load a model (deploy it under its own
 * name), unload it (delete the deployment). Loading takes optional {@code parameters} with the config file's fields
 * (e.g. {@code {"parameters": {"version": "2", "num_replicas": 2}}}); without a version it deploys the model's highest
 * version. Protected by the management token like {@code /api}.
 */
@Path("/v2/repository")
@Blocking
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Management")
@ManagementApi
public class RepositoryResource {

    private final Deployments changes;
    private final DeploymentRegistry deployments;
    private final RepositoryModelSource repository;
    private final RequestBodies bodies;

    RepositoryResource(Deployments changes, DeploymentRegistry deployments, RepositoryModelSource repository,
            RequestBodies bodies) {
        this.changes = changes;
        this.deployments = deployments;
        this.repository = repository;
        this.bodies = bodies;
    }

    @POST
    @Path("/index")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Every model version in the repository, with its state: READY, LOADING or UNAVAILABLE")
    public List<IndexEntry> index() {
        List<IndexEntry> index = new ArrayList<>();
        repository.repository().models().forEach((name, versions) -> {
            ServedDeployment served = deployments.find(name).orElse(null);
            MultiplexedModels models = served == null ? deployments.multiplexing(name) : null;
            if (models != null) {
                index.addAll(multiplexedEntries(name, versions, models));
                return;
            }
            for (String version : versions) {
                ServedDeployment serving = servingOf(name, version, served);
                String atZero = serving == null ? null : switch (serving.deployment().state()) {
                    case IDLE -> "scaled to zero; a request loads it";
                    case PARKED -> "parked at num_replicas 0";
                    default -> null;
                };
                String under = serving == null || serving.name().equals(name) ? ""
                        : "served by deployment '" + serving.name() + "'";
                index.add(new IndexEntry(name, version,
                        serving == null || atZero != null ? "UNAVAILABLE" : serving.ready() ? "READY" : "LOADING",
                        serving == null ? "not deployed"
                                : join(under, atZero != null ? atZero : serving.deployment().failure().orElse(""))));
            }
        });
        return index;
    }

    /**
     * The deployment that serves version {@code version} of model {@code name}: the one of the model's own name
     * ({@code named}) when it does, else another that does (a ready one first, then by name); null when none does.
     */
    private ServedDeployment servingOf(String name, String version, ServedDeployment named) {
        if (named != null && serves(named, name, version)) {
            return named;
        }
        return deployments.all().stream().filter(served -> serves(served, name, version))
                .min(Comparator.comparing((ServedDeployment served) -> !served.ready())
                        .thenComparing(ServedDeployment::name))
                .orElse(null);
    }

    private static boolean serves(ServedDeployment served, String name, String version) {
        return served.multiplexed() == null && served.config().model().name().equals(name)
                && served.config().version().equals(version);
    }

    private static String join(String first, String second) {
        return first.isEmpty() ? second : second.isEmpty() ? first : first + "; " + second;
    }

    /**
     * The index entries of a model a multiplexed deployment serves: its served version READY while a replica holds
     * it, else UNAVAILABLE (it loads on its first request); its other versions UNAVAILABLE.
     */
    private static List<IndexEntry> multiplexedEntries(String name, List<String> versions,
            MultiplexedModels models) {
        ServedDeployment model = models.deployment().find(name);
        boolean loaded = model != null && !models.deployment().replicasOf(name).isEmpty();
        String served = model != null ? model.config().version() : null;
        List<IndexEntry> entries = new ArrayList<>();
        for (String version : versions) {
            boolean current = loaded && version.equals(served);
            entries.add(new IndexEntry(name, version, !current ? "UNAVAILABLE" : model.ready() ? "READY" : "LOADING",
                    current ? model.deployment().failure().orElse("")
                            : "multiplexed by deployment '" + models.name() + "': "
                            + (loaded ? "it serves version " + served : "loaded on its first request")));
        }
        return entries;
    }

    @POST
    @Path("/models/{name}/load")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Deploy model {name} under its own name (or change its deployment), with optional parameters")
    public Map<String, Object> load(@PathParam("name") String name, byte[] body) {
        String source = "POST /v2/repository/models/" + name + "/load";
        ObjectNode fields = JsonNodes.object();
        byte[] checked = bodies.checkSize(body);
        if (checked.length > 0) {
            JsonNode request = ConfigParser.read(new String(checked, StandardCharsets.UTF_8), source);
            JsonNode parameters = request.get("parameters");
            if (parameters != null && parameters.isObject()) {
                fields.setAll((ObjectNode) parameters);
            } else if (parameters != null) {
                throw new ApiError(400, source + ": 'parameters' must be an object of deployment fields");
            }
        }
        fields.put("model", name);
        if (!fields.has("version")) {
            fields.put("version", highestVersion(name, source));
        }
        ServedDeployment current = deployments.find(name).orElse(null);
        var config = current == null ? ConfigParser.deployment(name, fields, source)
                : ConfigParser.merge(current.config(), fields, source);
        changes.put(config, source);
        return ManagementResource.describe(deployments.get(name));
    }

    @POST
    @Path("/models/{name}/unload")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Delete the deployment of model {name}; admitted requests finish first")
    public Map<String, Object> unload(@PathParam("name") String name) {
        changes.delete(name);
        return Map.of("unloaded", name);
    }

    private String highestVersion(String name, String source) {
        try {
            ModelRepository.checkPlain("model name", name);
        } catch (IllegalArgumentException e) {
            throw new ApiError(400, source + ": " + e.getMessage());
        }
        List<String> versions = repository.repository().models().get(name);
        if (versions == null || versions.isEmpty()) {
            throw new ApiError(404, source + ": model '" + name + "' is not in the repository");
        }
        return ModelRepository.newest(versions);
    }
}
