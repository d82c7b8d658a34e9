package dev.serval.predictor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.error.InvalidInput;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Serval's embeddings of the default model against vectors computed independently by
 * {@code scripts/make_minilm_reference.py} (Python onnxruntime + tokenizers on the same ONNX file).
 */
class TextEmbeddingModelTest {

    private static TextEmbeddingModel model;
    private static JsonNode reference;

    @BeforeAll
    static void load() throws Exception {
        Path dir = Path.of("target", "models");
        ClassLoader loader = TextEmbeddingModelTest.class.getClassLoader();
        model = TextEmbeddingModel.load(
                ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", dir),
                ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", dir),
                256,
                1);
        try (InputStream in = loader.getResourceAsStream("reference/minilm-reference.json")) {
            reference = new ObjectMapper().readTree(in);
        }
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void matchesTheIndependentReferenceForEverySentence() throws Exception {
        assertEquals(256, reference.get("max_length").asInt());
        JsonNode sentences = reference.get("sentences");
        assertTrue(sentences.size() >= 12, "the reference file holds a dozen sentences");
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            for (JsonNode sentence : sentences) {
                String text = sentence.get("text").asText();
                Embedding embedding = predictor.predict(text);
                float[] expected = toFloats(sentence.get("embedding"));
                double cosine = cosine(expected, embedding.vector());
                assertTrue(cosine >= 0.999, "cosine " + cosine + " for: " + text);
                assertEquals(sentence.get("tokens").asInt(), embedding.tokens(), "tokens of: " + text);
            }
        }
    }

    @Test
    void truncatesLongTextsAt256Tokens() throws Exception {
        String longText = "word ".repeat(1000);
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            assertEquals(256, predictor.predict(longText).tokens());
        }
    }

    @Test
    void returnsUnitVectorsOfTheModelsDimension() throws Exception {
        assertEquals(384, model.dimension());
        assertEquals(List.of(-1L, 384L), model.signature().outputs().getFirst().shape());
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            float[] vector = predictor.predict("unit length").vector();
            assertEquals(1.0, Math.sqrt(dot(vector, vector)), 1e-5);
        }
    }

    @Test
    void givesTheSameVectorForTheSameTextEveryTime() throws Exception {
        try (Predictor<String, Embedding> a = model.newPredictor(); Predictor<String, Embedding> b = model.newPredictor()) {
            float[] first = a.predict("The same text twice.").vector();
            a.predict("Something much longer in between, to change what the session last saw.");
            float[] second = b.predict("The same text twice.").vector();
            for (int i = 0; i < first.length; i++) {
                assertEquals(first[i], second[i], 1e-6, "element " + i);
            }
        }
    }

    @Test
    void rejectsEmptyText() {
        InvalidInput error = assertThrows(InvalidInput.class, () -> model.validate("", 3));
        assertEquals("text 3 is an empty string", error.getMessage());
    }

    private static float[] toFloats(JsonNode array) {
        float[] values = new float[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) array.get(i).asDouble();
        }
        return values;
    }

    private static double cosine(float[] a, float[] b) {
        return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
    }

    private static double dot(float[] a, float[] b) {
        assertEquals(a.length, b.length);
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += (double) a[i] * b[i];
        }
        return sum;
    }
}
