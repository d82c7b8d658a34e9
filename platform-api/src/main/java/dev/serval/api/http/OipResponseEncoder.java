package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.serval.predictor.Embedding;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Encodes embeddings as an Open Inference Protocol response: output {@code embedding}, FP32, shape
 * {@code [n, dim]}, as flat JSON data or, when asked, in the binary section (little-endian float32 after a
 * JSON header whose length is in {@code Inference-Header-Content-Length}). Thread-safe, stateless.
 */
final class OipResponseEncoder {

    static final String HEADER_LENGTH = "Inference-Header-Content-Length";

    private final JsonFactory factory;

    OipResponseEncoder(JsonFactory factory) {
        this.factory = factory;
    }

    Response encode(String model, OipRequest request, List<Embedding> embeddings) {
        int rows = embeddings.size();
        int dimension = embeddings.getFirst().vector().length;
        int binarySize = request.binaryOutput() ? rows * dimension * Float.BYTES : 0;
        ByteArrayOutputStream out = new ByteArrayOutputStream(
                256 + (request.binaryOutput() ? binarySize : rows * dimension * 12));
        try (JsonGenerator json = factory.createGenerator(out)) {
            json.writeStartObject();
            json.writeStringField("model_name", model);
            json.writeStringField("model_version", "1");
            if (request.id() != null) {
                json.writeStringField("id", request.id());
            }
            json.writeArrayFieldStart("outputs");
            json.writeStartObject();
            json.writeStringField("name", OipRequestDecoder.OUTPUT);
            json.writeStringField("datatype", "FP32");
            json.writeArrayFieldStart("shape");
            json.writeNumber(rows);
            json.writeNumber(dimension);
            json.writeEndArray();
            if (request.binaryOutput()) {
                json.writeObjectFieldStart("parameters");
                json.writeNumberField("binary_data_size", binarySize);
                json.writeEndObject();
            } else {
                json.writeArrayFieldStart("data");
                for (Embedding embedding : embeddings) {
                    for (float value : embedding.vector()) {
                        json.writeNumber(value);
                    }
                }
                json.writeEndArray();
            }
            json.writeEndObject();
            json.writeEndArray();
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (!request.binaryOutput()) {
            return Response.ok(out.toByteArray(), MediaType.APPLICATION_JSON_TYPE).build();
        }
        int headerLength = out.size();
        ByteBuffer floats = ByteBuffer.allocate(binarySize).order(ByteOrder.LITTLE_ENDIAN);
        for (Embedding embedding : embeddings) {
            for (float value : embedding.vector()) {
                floats.putFloat(value);
            }
        }
        out.writeBytes(floats.array());
        return Response.ok(out.toByteArray(), MediaType.APPLICATION_OCTET_STREAM_TYPE)
                .header(HEADER_LENGTH, headerLength)
                .build();
    }
}
