package dev.serval.api.clients;

import static dev.serval.api.Serving.MODEL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.Serving;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TEI's client libraries, unmodified, against Serval's TEI routes: huggingface_hub's {@code InferenceClient} given a
 * deployment's TEI URL, and LlamaIndex's {@code TextEmbeddingsInference} given the root URL. Each answers the
 * reference embeddings of the MiniLM (sentence-transformers' own, within the model's quantisation).
 */
@QuarkusTest
class TeiClientsTest {

    @Test
    void huggingFaceHubAndLlamaIndexEmbedAsTheReference() throws Exception {
        Serving.awaitReady();
        JsonNode sentences = Serving.reference().get("sentences");
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            texts.add(sentences.get(i).get("text").asText());
        }
        List<String> args = new ArrayList<>(List.of("http://127.0.0.1:" + RestAssured.port, MODEL));
        args.addAll(texts);

        JsonNode answers = new ObjectMapper().readTree(PythonClients.run("tei_clients.py", args));

        for (String client : List.of("hf_feature_extraction", "llamaindex")) {
            JsonNode vectors = answers.get(client);
            assertEquals(texts.size(), vectors.size(), client);
            for (int i = 0; i < texts.size(); i++) {
                float[] vector = floats(vectors.get(i));
                assertEquals(384, vector.length, client);
                double cosine = Serving.cosine(Serving.floats(sentences.get(i).get("embedding"), 0, 384), vector);
                assertTrue(cosine >= 0.999, client + " text " + i + ": cosine " + cosine);
            }
        }
        JsonNode similarities = answers.get("hf_sentence_similarity");
        assertEquals(texts.size() - 1, similarities.size());
        float[] first = floats(answers.get("hf_feature_extraction").get(0));
        for (int i = 1; i < texts.size(); i++) {
            double expected = Serving.cosine(first, floats(answers.get("hf_feature_extraction").get(i)));
            assertEquals(expected, similarities.get(i - 1).asDouble(), 1e-5, "similarity of text " + i);
        }
    }

    private static float[] floats(JsonNode array) {
        float[] values = new float[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) array.get(i).asDouble();
        }
        return values;
    }
}
