package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.MultiplexedModels;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Deployment;
import dev.serval.error.NotReady;
import dev.serval.error.UnknownDeployment;
import dev.serval.model.ModelSignature;
import dev.serval.model.TensorSignature;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The Open Inference Protocol (KServe v2) REST endpoints but inference: server and model metadata and health. They run
 * on the Vert.x event loop and never block. Inference itself ({@code POST /v2/models/{name}/infer}) is served by
 * {@link InferenceRoutes}.
 */
@Path("/v2")
@NonBlocking
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Open Inference Protocol")
public class InferenceResource {

    /** The OIP extensions served over REST: binary tensors, and the repository ({@code /v2/repository}). */
    private static final List<String> EXTENSIONS = List.of("binary_tensor_data", "model_repository");

    private final DeploymentRegistry deployments;
    private final String version;
    private final ApiToken token;
    /** {@code serval.multiplex.private}: a multiplexed deployment's models are listed only with the token. */
    private final boolean privateTenants;

    InferenceResource(DeploymentRegistry deployments, ApiToken token, ServalConfig config,
            @ConfigProperty(name = "quarkus.application.version", defaultValue = "unknown") String version) {
        this.deployments = deployments;
        this.version = version;
        this.token = token;
        this.privateTenants = config.multiplex().privateTenants();
    }

    @GET
    @Operation(summary = "Server metadata")
    public Map<String, Object> server() {
        return Map.of("name", "serval", "version", version, "extensions", EXTENSIONS);
    }

    @GET
    @Path("/health/live")
    @Operation(summary = "Server liveness: 200 while live, 503 once the failure monitor gave up on this node")
    public Response live() {
        boolean live = deployments.live();
        return Response.status(live ? 200 : 503).entity(Map.of("live", live)).build();
    }

    @GET
    @Path("/health/ready")
    @Operation(summary = "Server readiness: 200 when every deployment has its minimum of warmed-up replicas, else 503")
    public Response ready() {
        boolean ready = deployments.allReady();
        return Response.status(ready ? 200 : 503).entity(Map.of("ready", ready)).build();
    }

    @GET
    @Path("/models/{name}")
    @Operation(summary = "Model metadata: inputs, outputs, versions, platform. A multiplexed model is never loaded "
            + "for it: one that has not served yet answers its version, kind and the inputs its kind takes")
    public CompletionStage<ModelMetadata> model(@PathParam("name") String name,
            @HeaderParam(HttpHeaders.AUTHORIZATION) String authorization) {
        ServedDeployment served = deployments.find(name).orElse(null);
        if (served != null && served.multiplexed() != null && privateTenants && !token.accepts(authorization)) {
            throw new ApiError(401, "the models of multiplexed deployment '" + name + "' are listed only with the "
                    + "management token (serval.multiplex.private): Authorization: Bearer <token>");
        }
        return model(name);
    }

    /**
     * {@link #model(String, String)} for a caller that renders no model list (gRPC's {@code ModelMetadata}, whose
     * answer has no such field).
     */
    public CompletionStage<ModelMetadata> model(String name) {
        ServedDeployment served = deployments.find(name).orElse(null);
        if (served != null && served.multiplexed() != null) {
            return CompletableFuture.completedFuture(multiplexed(served.multiplexed()));
        }
        if (served != null) {
            return CompletableFuture.completedFuture(metadata(name, served.deployment()));
        }
        ServedDeployment model = deployments.route(name, null); // a multiplexed model (found, not loaded), or null
        if (model == null) {
            throw deployments.unknown(name);
        }
        // A metadata read loads nothing: the model's signature once it has served, else what its kind tells.
        return CompletableFuture.completedFuture(model.deployment().signature().isPresent()
                ? metadata(name, model.deployment()) : unloaded(name, model));
    }

    /**
     * The metadata of a multiplexed model that has not served yet, without loading it: its name, version, kind and
     * the inputs its kind takes (a text model's {@code text}); its outputs (their shapes come from its graph) once it
     * has served.
     */
    private static ModelMetadata unloaded(String name, ServedDeployment model) {
        return ModelMetadata.unloaded(name, model.config().version(), model.kind().id(), model.kind().text()
                ? List.of(new TensorSignature("text", "BYTES", List.of(-1L))) : List.of());
    }

    /** A multiplexed deployment's own metadata: the models it serves (the repository's, as of its last scan). */
    private static ModelMetadata multiplexed(MultiplexedModels models) {
        return ModelMetadata.multiplexed(models.name(), models.config().model().name(),
                models.deployment().modelsMatching());
    }

    private static ModelMetadata metadata(String name, Deployment<?, ?> deployment) {
        ModelSignature signature = deployment.signature()
                .orElseThrow(() -> new NotReady("model '" + name + "' is " + stateText(deployment)));
        return ModelMetadata.served(name, deployment.spec().version(), signature.platform(), signature.inputs(),
                signature.outputs(), deployment.batching().map(StatusResource::describe).orElse(null));
    }

    @GET
    @Path("/models/{name}/ready")
    @Operation(summary = "Model readiness: 200 when loaded and warmed up, 503 otherwise, 404 if unknown")
    public Response modelReady(@PathParam("name") String name) {
        boolean ready = ready(name);
        return Response.status(ready ? 200 : 503).entity(Map.of("name", name, "ready", ready)).build();
    }

    /**
     * Whether model {@code name} is ready: a deployment once loaded and warmed up; a multiplexed model while its
     * deployment is (it loads on its first request).
     *
     * @throws UnknownDeployment when nothing serves {@code name}
     */
    public boolean ready(String name) {
        ServedDeployment served = deployments.find(name).orElse(null);
        MultiplexedModels models = served == null ? deployments.multiplexing(name) : null;
        if (served == null && (models == null || !models.deployment().matches(name))) {
            throw deployments.unknown(name);
        }
        return served == null || served.ready();
    }

    private static String stateText(Deployment<?, ?> deployment) {
        return switch (deployment.state()) {
            case LOADING -> "still loading";
            case FAILED -> "not loaded: " + deployment.failure().orElse("unknown error");
            case STOPPED -> "shutting down";
            case READY -> "ready";
            case IDLE -> "scaled to zero and has not loaded yet (created with initial_replicas 0); a request "
                    + "starts it";
            case PARKED -> "parked at num_replicas 0: no replica runs until a change asks for one";
        };
    }
}
