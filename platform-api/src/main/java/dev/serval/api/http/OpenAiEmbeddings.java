package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.serval.model.Embedding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;

/**
 * OpenAI-compatible embeddings ({@code POST /v1/embeddings}, served by {@link InferenceRoutes}), so that OpenAI
 * client libraries work unchanged against Serval: the request's JSON, its checks, and the response. Thread-safe: its
 * only state is each thread's buffers for formatting numbers ({@link NumberArrays}).
 */
final class OpenAiEmbeddings {

    private final Json json;
    private final JsonFactory factory;
    private final ThreadLocal<NumberArrays> numbers = NumberArrays.perThread();
    private final RequestLimits limits;

    OpenAiEmbeddings(Json json, JsonFactory factory, RequestLimits limits) {
        this.json = json;
        this.factory = factory;
        this.limits = limits;
    }

    /** Reads {@code model}, {@code input} (a string or an array of strings) and the options; 400 on mistakes. */
    EmbeddingsRequest decode(byte[] body) {
        return EmbeddingsRequest.from(json.readObject(body, 0, body.length), limits.maxTexts());
    }

    /**
     * The OpenAI response: one embedding object per input, in input order, with the token usage. The deployment has
     * held the embeddings to the request's {@code dimensions}.
     *
     * @param quantiser int8 or uint8 of a vector by the serving model's quantisation ranges; null for the other
     *                  encodings
     */
    Answer encode(EmbeddingsRequest request, List<Embedding> embeddings, Function<float[], int[]> quantiser) {
        int dimension = embeddings.getFirst().vector().length;
        Answer.Bytes out = new Answer.Bytes(256 + embeddings.size() * dimension * 14);
        EmbeddingsRequest.Encoding encoding = request.encoding();
        ByteBuffer floats = encoding == EmbeddingsRequest.Encoding.BASE64
                ? ByteBuffer.allocate(dimension * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN) : null;
        NumberArrays numbers = encoding == EmbeddingsRequest.Encoding.FLOAT ? this.numbers.get() : null;
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
                switch (encoding) {
                    case FLOAT -> numbers.write(gen, embedding.vector());
                    case BASE64 -> {
                        floats.clear();
                        for (float value : embedding.vector()) {
                            floats.putFloat(value);
                        }
                        gen.writeString(Base64.getEncoder().encodeToString(floats.array()));
                    }
                    case BINARY, UBINARY -> writeSignBits(gen, embedding.vector(),
                            encoding == EmbeddingsRequest.Encoding.BINARY ? -128 : 0);
                    case INT8, UINT8 -> gen.writeArray(quantiser.apply(embedding.vector()), 0, dimension);
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
        return Answer.json(out);
    }

    /**
     * Writes {@code vector}'s sign bits packed eight to a byte, most significant first (numpy's {@code packbits} of
     * {@code vector > 0}; a last partial byte is padded with zeros), each byte plus {@code offset}.
     */
    static void writeSignBits(JsonGenerator gen, float[] vector, int offset) throws IOException {
        gen.writeStartArray();
        for (int start = 0; start < vector.length; start += 8) {
            int bits = 0;
            for (int j = 0; j < 8; j++) {
                bits = bits << 1 | (start + j < vector.length && vector[start + j] > 0 ? 1 : 0);
            }
            gen.writeNumber(bits + offset);
        }
        gen.writeEndArray();
    }
}
