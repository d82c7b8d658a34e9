package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.model.ModelFiles;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Answers must not depend on batching: under concurrent load of mixed-length texts, through both HTTP APIs and in
 * multi-text requests, every text's vector equals (within 1e-5 per element) what it gets when sent alone. On the
 * quantised default model (row-coupled, so every text runs alone) and on a tiny FP32 encoder (independent rows, so
 * texts really are batched).
 */
@QuarkusTest
@TestProfile(BatchInvarianceHttpTest.TinyModel.class)
class BatchInvarianceHttpTest {

    public static class TinyModel implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            // no result cache: a repeated text would be answered from it, never batched with anything
            return Map.of(
                    "serval.deployments.all-minilm-l6-v2.cache", "off",
                    "serval.deployments.tiny.model", "tiny-encoder",
                    "serval.deployments.tiny.predictor-threads", "1",
                    "serval.deployments.tiny.max-batch-size", "8",
                    "serval.deployments.tiny.cache", "off",
                    "serval.deployments.tiny-chunked.model", "tiny-encoder",
                    "serval.deployments.tiny-chunked.max-length", "16",
                    "serval.deployments.tiny-chunked.long-inputs", "chunk",
                    "serval.deployments.tiny-chunked.chunk-overlap", "4");
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> TEXTS = texts();

    private static List<String> texts() {
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            texts.add(("message " + i + " about my order ").repeat(1 + (i * 5) % 17).trim());
        }
        texts.add("Zürich, Genève et Montréal 🎉");
        texts.add("long ".repeat(400).trim());
        return texts;
    }

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @Test
    void reportsHowEachModelBatches() {
        given().get("/v2/models/tiny").then().statusCode(200)
                .body("batching.mode", equalTo("batched"))
                .body("batching.batch_invariant", equalTo(true))
                .body("batching.reason", containsString("batch-size probe, texts/s at batch 1: "));
        given().get("/v2/models/" + Serving.MODEL).then().statusCode(200)
                .body("batching.mode", equalTo("single"))
                .body("batching.preferred_batch", equalTo(1))
                .body("batching.reason", containsString("DynamicQuantizeLinear"));
        given().get("/api/status").then().body("deployments.find { it.name == 'tiny' }.batching.mode", equalTo("batched"));
    }

    @Test
    void theDefaultModelAnswersTheSameWhateverIsInFlight() throws Exception {
        assertInvariantUnderLoad(Serving.MODEL);
    }

    @Test
    void theBatchedModelAnswersTheSameWhateverItIsBatchedWith() throws Exception {
        assertInvariantUnderLoad("tiny");
        given().get("/q/metrics").then().body(containsString("serval_batch_size_count{deployment=\"tiny\"}"))
                .body(containsString("serval_padding_tokens_total{deployment=\"tiny\"}"));
    }

    @Test
    void aDeploymentThatChunksEmbedsLongTextsWholeInsteadOfTruncatingThem() {
        String longText = "the quick brown fox jumps over the lazy dog ".repeat(5).trim();
        int chunked = given().contentType("application/json")
                .body("{\"model\":\"tiny-chunked\",\"input\":\"" + longText + "\"}").post("/v1/embeddings")
                .then().statusCode(200).extract().path("usage.prompt_tokens");
        int truncated = given().contentType("application/json")
                .body("{\"model\":\"tiny\",\"input\":\"" + longText + "\"}").post("/v1/embeddings")
                .then().statusCode(200).extract().path("usage.prompt_tokens");
        org.junit.jupiter.api.Assertions.assertTrue(chunked > 16, "every window was read: " + chunked);
        assertEquals(47, truncated, "the default deployment reads the whole text within its 256 tokens");
    }

    private static void assertInvariantUnderLoad(String model) throws Exception {
        Map<String, float[]> alone = new HashMap<>();
        for (String text : TEXTS) {
            alone.put(text, oip(model, List.of(text)).getFirst());
        }
        List<String> wrong = Collections.synchronizedList(new ArrayList<>());
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 6; c++) {
            boolean openAi = c % 2 == 1;
            clients.add(Thread.ofPlatform().start(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                try {
                    for (int r = 0; r < 20; r++) {
                        List<String> request = new ArrayList<>();
                        for (int k = 0, n = 1 + random.nextInt(4); k < n; k++) {
                            request.add(TEXTS.get(random.nextInt(TEXTS.size())));
                        }
                        List<float[]> answer = openAi ? openAi(model, request) : oip(model, request);
                        for (int k = 0; k < request.size(); k++) {
                            float[] expected = alone.get(request.get(k));
                            for (int d = 0; d < expected.length; d++) {
                                if (Math.abs(expected[d] - answer.get(k)[d]) > 1e-5) {
                                    wrong.add((openAi ? "openai" : "oip") + " '" + request.get(k) + "' element " + d);
                                    return;
                                }
                            }
                        }
                    }
                } catch (Exception e) {
                    wrong.add(e.toString());
                }
            }));
        }
        for (Thread client : clients) {
            client.join(TimeUnit.MINUTES.toMillis(3));
        }
        assertEquals(List.of(), wrong);
    }

    private static List<float[]> oip(String model, List<String> texts) throws IOException {
        String body = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[" + texts.size() + "],\"data\":"
                + JSON.writeValueAsString(texts) + "}]}";
        JsonNode output = JSON.readTree(given().contentType("application/json").body(body)
                .post("/v2/models/" + model + "/infer").then().statusCode(200).extract().asByteArray()).get("outputs").get(0);
        int dimension = output.get("shape").get(1).asInt();
        List<float[]> vectors = new ArrayList<>();
        for (int t = 0; t < texts.size(); t++) {
            vectors.add(Serving.floats(output.get("data"), t * dimension, dimension));
        }
        return vectors;
    }

    private static List<float[]> openAi(String model, List<String> texts) throws IOException {
        String body = "{\"model\":\"" + model + "\",\"input\":" + JSON.writeValueAsString(texts) + "}";
        JsonNode data = JSON.readTree(given().contentType("application/json").body(body).post("/v1/embeddings").then()
                .statusCode(200).extract().asByteArray()).get("data");
        List<float[]> vectors = new ArrayList<>();
        for (JsonNode item : data) {
            vectors.add(Serving.floats(item.get("embedding"), 0, item.get("embedding").size()));
        }
        return vectors;
    }
}
