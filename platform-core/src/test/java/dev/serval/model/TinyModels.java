package dev.serval.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The tiny models of {@code scripts/make_tiny_models.py} and the outputs numpy computed for them
 * ({@code reference/tiny-models-expected.json}).
 */
public final class TinyModels {

    private static final JsonNode EXPECTED = read();

    private TinyModels() {
    }

    /** {@code models/<name>/<file>} in the test resources. */
    public static Path file(String name, String file) {
        return Path.of("src", "test", "resources", "models", name, file);
    }

    /** {@code file} of the tiny cross-encoder Serval bundles as {@code tiny-reranker} (main resources). */
    public static Path reranker(String file) {
        return Path.of("src", "main", "resources", "serval", "models", "tiny-reranker", file);
    }

    /** What the script computed for model {@code name}. */
    public static JsonNode expected(String name) {
        return EXPECTED.get(name);
    }

    public static float[] floats(JsonNode array) {
        float[] values = new float[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) array.get(i).asDouble();
        }
        return values;
    }

    private static JsonNode read() {
        try (InputStream in = TinyModels.class.getClassLoader().getResourceAsStream("reference/tiny-models-expected.json")) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
