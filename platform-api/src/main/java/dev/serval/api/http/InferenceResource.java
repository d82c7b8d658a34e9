package dev.serval.api.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.routing.Router;
import dev.serval.tensor.TensorIO;
import dev.serval.tensor.Tensors;
import java.util.concurrent.CompletableFuture;
import dev.serval.deployment.Deployment;
import dev.serval.error.NotReady;
import dev.serval.predictor.ModelSignature;
import dev.serval.predictor.TensorSignature;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The Open Inference Protocol (KServe v2) REST endpoints. Everything here runs on the Vert.x event loop and
 * never blocks: inference is handed to the deployment's predictor threads and the response is encoded when
 * the result comes back to this request's context.
 */
@Path("/v2")
@NonBlocking
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "Open Inference Protocol")
public class InferenceResource {

    private final Deployments deployments;
    private final RequestBodies bodies;
    private final OipRequestDecoder decoder;
    private final OipResponseEncoder encoder;
    private final String version;

    InferenceResource(Deployments deployments, RequestBodies bodies, ObjectMapper mapper,
            @ConfigProperty(name = "quarkus.application.version", defaultValue = "unknown") String version) {
        this.deployments = deployments;
        this.bodies = bodies;
        this.decoder = new OipRequestDecoder(new Json(mapper));
        this.encoder = new OipResponseEncoder(mapper.getFactory());
        this.version = version;
    }

    @GET
    @Operation(summary = "Server metadata")
    public Map<String, Object> server() {
        return Map.of("name", "serval", "version", version, "extensions", List.of("binary_tensor_data"));
    }

    @GET
    @Path("/health/live")
    @Operation(summary = "Server liveness: 200 while live, 503 once the failure monitor gave up on this node")
    public Response live() {
        boolean live = deployments.failureMonitor().live();
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
    @Operation(summary = "Model metadata: inputs, outputs, versions, platform")
    public Map<String, Object> model(@PathParam("name") String name) {
        Deployment<?, ?> deployment = deployments.get(name).deployment();
        ModelSignature signature = deployment.signature()
                .orElseThrow(() -> new NotReady("model '" + name + "' is " + stateText(deployment)));
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("name", name);
        metadata.put("versions", List.of(deployment.spec().version()));
        metadata.put("platform", signature.platform());
        metadata.put("inputs", signature.inputs().stream().map(InferenceResource::tensor).toList());
        metadata.put("outputs", signature.outputs().stream().map(InferenceResource::tensor).toList());
        deployment.batching().ifPresent(batching -> metadata.put("batching", StatusResource.describe(batching)));
        return metadata;
    }

    @GET
    @Path("/models/{name}/ready")
    @Operation(summary = "Model readiness: 200 when loaded and warmed up, 503 otherwise, 404 if unknown")
    public Response modelReady(@PathParam("name") String name) {
        boolean ready = deployments.get(name).ready();
        return Response.status(ready ? 200 : 503).entity(Map.of("name", name, "ready", ready)).build();
    }

    @POST
    @Path("/models/{name}/infer")
    @Consumes(MediaType.WILDCARD)
    @Operation(summary = "Inference: input tensors to output tensors, as the model's kind maps them (text models: input"
            + " 'text' BYTES [n]; embedders return 'embedding' FP32 [n, dim], classifiers 'scores' and 'label')")
    public Uni<Response> infer(
            @PathParam("name") String name,
            @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
            @HeaderParam(OipResponseEncoder.HEADER_LENGTH) String headerLength,
            @HeaderParam(Submissions.TIMEOUT_HEADER) String timeout,
            @RequestBody(description = "An OIP v2 inference request; or, with Inference-Header-Content-Length, "
                    + "that many bytes of JSON header followed by binary tensor data", content = {
                @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two texts",
                        value = "{\"id\":\"42\",\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\","
                                + "\"shape\":[2],\"data\":[\"Hello, world!\",\"How do I reset my password?\"]}]}")),
                @Content(mediaType = MediaType.APPLICATION_OCTET_STREAM)})
            byte[] body) {
        long start = System.nanoTime();
        ServedDeployment served = deployments.get(name);
        return Submissions.submit(served, DeploymentMeters.Api.OIP, start, timeout,
                () -> {
                    RequestBodies.checkContentType(contentType, true);
                    return decoder.decode(bodies.checkSize(body), headerLength);
                },
                OipRequest::timeoutMicros,
                request -> submit(served.deployment(), request),
                (request, call) -> encoder.encode(name, call.version(), request, call.outputs()));
    }

    /** What the encoder needs of a submitted request once its result is in. */
    private record Call<I, O>(Deployment<I, O> deployment, TensorIO<I, O> io, CompletableFuture<List<O>> result) {

        Tensors outputs() {
            return io.outputs(result.join());
        }

        /** The version of the replica that answered (the deployment's, if the request never reached one). */
        String version() {
            return Router.servedVersion(result).orElse(deployment.spec().version());
        }
    }

    /** Maps the request's tensors to the model's inputs (its kind decides how) and submits them. */
    private static <I, O> Submissions.Submitted<Call<?, ?>> submit(Deployment<I, O> deployment, OipRequest request) {
        TensorIO<I, O> io = deployment.io();
        if (request.outputs() != null) {
            deployment.signature().ifPresent(signature -> OipResponseEncoder.checkRequestedOutputs(request, signature));
        }
        List<I> inputs = io.inputs(request.inputs());
        CompletableFuture<List<O>> result = deployment.submit(inputs);
        return new Submissions.Submitted<>(result, inputs.size(), new Call<>(deployment, io, result));
    }

    private static Map<String, Object> tensor(TensorSignature tensor) {
        return Map.of("name", tensor.name(), "datatype", tensor.datatype(), "shape", tensor.shape());
    }

    private static String stateText(Deployment<?, ?> deployment) {
        return switch (deployment.state()) {
            case LOADING -> "still loading";
            case FAILED -> "not loaded: " + deployment.failure().orElse("unknown error");
            case STOPPED -> "shutting down";
            case READY -> "ready";
        };
    }
}
