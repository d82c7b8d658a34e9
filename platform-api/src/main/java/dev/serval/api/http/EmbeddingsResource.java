package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.serving.DeploymentMeters;
import dev.serval.api.serving.Deployments;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.error.InvalidInput;
import dev.serval.predictor.Embedding;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * OpenAI-compatible {@code POST /v1/embeddings}, so that OpenAI client libraries work unchanged against Serval.
 * Runs on the event loop and never blocks, like {@link InferenceResource}.
 */
@Path("/v1/embeddings")
@NonBlocking
@Tag(name = "OpenAI-compatible")
public class EmbeddingsResource {

    private final Deployments deployments;
    private final RequestBodies bodies;
    private final Json json;
    private final JsonFactory factory;

    EmbeddingsResource(Deployments deployments, RequestBodies bodies, ObjectMapper mapper) {
        this.deployments = deployments;
        this.bodies = bodies;
        this.json = new Json(mapper);
        this.factory = mapper.getFactory();
    }

    @POST
    @Consumes(MediaType.WILDCARD)
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Embeddings, as OpenAI's API: input (string or array of strings), model, encoding_format")
    public Uni<Response> embed(
            @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
            @HeaderParam(Submissions.TIMEOUT_HEADER) String timeout,
            @RequestBody(description = "model; input: a string or an array of strings; encoding_format: float or base64",
                    content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two texts",
                            value = "{\"model\":\"all-minilm-l6-v2\",\"input\":[\"Hello, world!\",\"Hi\"]}")))
            byte[] body) {
        long start = System.nanoTime();
        RequestBodies.checkContentType(contentType, false);
        byte[] checked = bodies.checkSize(body);
        EmbeddingsRequest request = EmbeddingsRequest.from(json.readObject(checked, 0, checked.length));
        ServedDeployment served = deployments.get(request.model());
        return Submissions.submit(served, DeploymentMeters.Api.OPENAI, start, timeout,
                () -> checkDimensions(served, request),
                ignored -> -1,
                accepted -> {
                    CompletableFuture<List<Embedding>> result = served.embeddings().submit(accepted.texts());
                    return new Submissions.Submitted<>(result, accepted.texts().size(), result);
                },
                (accepted, result) -> encode(accepted, result.join()));
    }

    /** {@code dimensions}, when given, must be the model's own: Serval does not shorten embeddings. */
    private static EmbeddingsRequest checkDimensions(ServedDeployment served, EmbeddingsRequest request) {
        served.embeddings(); // refuses models of other kinds
        served.deployment().signature().ifPresent(signature -> {
            long dimension = signature.outputs().getFirst().shape().get(1);
            if (request.dimensions() != 0 && request.dimensions() != dimension) {
                throw new InvalidInput("dimensions", "model '" + request.model() + "' returns " + dimension
                        + " dimensions; 'dimensions' " + request.dimensions() + " is not supported");
            }
        });
        return request;
    }

    private Response encode(EmbeddingsRequest request, List<Embedding> embeddings) {
        int dimension = embeddings.getFirst().vector().length;
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + embeddings.size() * dimension * 12);
        ByteBuffer floats = request.base64()
                ? ByteBuffer.allocate(dimension * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN) : null;
        long tokens = 0;
        try (JsonGenerator gen = factory.createGenerator(out)) {
            gen.writeStartObject();
            gen.writeStringField("object", "list");
            gen.writeArrayFieldStart("data");
            for (int i = 0; i < embeddings.size(); i++) {
                Embedding embedding = embeddings.get(i);
                tokens += embedding.tokens();
                gen.writeStartObject();
                gen.writeStringField("object", "embedding");
                gen.writeNumberField("index", i);
                gen.writeFieldName("embedding");
                if (floats != null) {
                    floats.clear();
                    for (float value : embedding.vector()) {
                        floats.putFloat(value);
                    }
                    gen.writeString(Base64.getEncoder().encodeToString(floats.array()));
                } else {
                    gen.writeStartArray();
                    for (float value : embedding.vector()) {
                        gen.writeNumber(value);
                    }
                    gen.writeEndArray();
                }
                gen.writeEndObject();
            }
            gen.writeEndArray();
            gen.writeStringField("model", request.model());
            gen.writeObjectFieldStart("usage");
            gen.writeNumberField("prompt_tokens", tokens);
            gen.writeNumberField("total_tokens", tokens);
            gen.writeEndObject();
            gen.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Response.ok(out.toByteArray(), MediaType.APPLICATION_JSON_TYPE).build();
    }
}
