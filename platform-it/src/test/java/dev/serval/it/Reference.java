package dev.serval.it;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;

/** The independent reference embeddings (scripts/make_minilm_reference.py) in platform-core's test resources. */
final class Reference {

    private Reference() {
    }

    static JsonNode sentences() {
        try {
            return Http.JSON.readTree(ServalImage.root()
                    .resolve("platform-core/src/test/resources/reference/minilm-reference.json").toFile())
                    .get("sentences");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static float[] embedding(JsonNode sentence) {
        return floats(sentence.get("embedding"));
    }

    static float[] floats(JsonNode array) {
        float[] values = new float[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) array.get(i).asDouble();
        }
        return values;
    }

    static double cosine(float[] a, float[] b) {
        if (a.length != b.length) {
            throw new AssertionError("dimensions differ: " + a.length + " vs " + b.length);
        }
        double dot = 0;
        double na = 0;
        double nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += (double) a[i] * b[i];
            na += (double) a[i] * a[i];
            nb += (double) b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    static String quote(String text) {
        try {
            return Http.JSON.writeValueAsString(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
