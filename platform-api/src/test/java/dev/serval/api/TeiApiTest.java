package dev.serval.api;

import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.net.URL;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Hugging Face TEI's API: the root paths serve {@code serval.tei.deployment} (the default MiniLM), {@code /tei/<name>/}
 * any deployment; shapes, statuses and error bodies as TEI's OpenAPI document has them.
 */
@QuarkusTest
class TeiApiTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static Response post(String path, String body) {
        return given().contentType("application/json").body(body).post(path);
    }

    private static void expectError(Response response, int status, String type, String message) {
        response.then().statusCode(status).contentType("application/json")
                .body("error", containsString(message))
                .body("error_type", equalTo(type));
    }

    @Test
    void embedsAStringAndAListAtTheRootAndUnderTheDeploymentsPath() {
        JsonNode sentences = Serving.reference().get("sentences");
        String first = sentences.get(0).get("text").asText();
        String second = sentences.get(3).get("text").asText();

        for (String path : List.of("/embed", "/tei/" + MODEL + "/embed", "/tei/" + MODEL)) {
            Response one = post(path, "{\"inputs\":\"" + first + "\"}");
            one.then().statusCode(200).body("$", hasSize(1)).body("[0]", hasSize(384));
            float[] vector = Serving.floats(one.jsonPath().getList("[0]", Float.class));
            assertTrue(Serving.cosine(Serving.floats(sentences.get(0).get("embedding"), 0, 384), vector) >= 0.999, path);

            Response two = post(path, "{\"inputs\":[\"" + first + "\",\"" + second + "\"],\"normalize\":true,"
                    + "\"truncate\":true,\"truncation_direction\":\"Right\"}");
            two.then().statusCode(200).body("$", hasSize(2));
            float[] last = Serving.floats(two.jsonPath().getList("[1]", Float.class));
            assertTrue(Serving.cosine(Serving.floats(sentences.get(3).get("embedding"), 0, 384), last) >= 0.999, path);
        }
    }

    /** Asserts that {@code actual} (one text's token vectors, as answered) equals the reference's within 1e-4. */
    private static void assertTokenVectors(JsonNode expected, List<List<Float>> actual, String where) {
        assertEquals(expected.size(), actual.size(), "one vector per token, [CLS] and [SEP] included: " + where);
        for (int t = 0; t < expected.size(); t++) {
            assertEquals(384, actual.get(t).size(), where);
            for (int d = 0; d < 384; d++) {
                assertEquals(expected.get(t).get(d).asDouble(), actual.get(t).get(d), 1e-4,
                        where + ", token " + t + ", element " + d);
            }
        }
    }

    private static JsonNode withTokens(String text) {
        for (JsonNode sentence : Serving.reference().get("sentences")) {
            if (sentence.get("text").asText().equals(text)) {
                return sentence.get("token_embeddings");
            }
        }
        throw new AssertionError("no reference token embeddings for " + text);
    }

    @Test
    void embedAllAnswersEveryTokensVectorAsTheReferenceAtTheRootAndUnderTheDeploymentsPath() {
        JsonNode hello = withTokens("Hello, world!");
        JsonNode love = withTokens("I love it");
        for (String path : List.of("/embed_all", "/tei/" + MODEL + "/embed_all")) {
            Response two = post(path, "{\"inputs\":[\"Hello, world!\",\"I love it\"],\"truncate\":true,"
                    + "\"truncation_direction\":\"right\"}");
            two.then().statusCode(200).contentType("application/json").body("$", hasSize(2))
                    .body("[0]", hasSize(6)).body("[1]", hasSize(5));
            assertTokenVectors(hello, two.jsonPath().getList("[0]"), path + " [0]");
            assertTokenVectors(love, two.jsonPath().getList("[1]"), path + " [1]");

            Response one = post(path, "{\"inputs\":\"I love it\"}");
            one.then().statusCode(200).body("$", hasSize(1));
            assertTokenVectors(love, one.jsonPath().getList("[0]"), path + ", alone");
        }
        // A text past max_length is truncated at it, as /embed reads it; its answer is bounded by max_length, not by
        // its length, so a long document is not refused as too large for the byte budget.
        post("/embed_all", "{\"inputs\":\"" + "word ".repeat(400) + "\"}").then().statusCode(200)
                .body("[0]", hasSize(256));
        post("/embed_all", "{\"inputs\":[\"" + "word ".repeat(200_000) + "\",\"I love it\"]}").then().statusCode(200)
                .body("[0]", hasSize(256)).body("[1]", hasSize(5));
    }

    @Test
    void aTextsTokenVectorsDoNotDependOnWhatItIsSentWith() {
        List<List<Float>> alone = post("/embed_all", "{\"inputs\":[\"I love it\"]}").jsonPath().getList("[0]");
        StringBuilder many = new StringBuilder("{\"inputs\":[");
        for (int i = 0; i < 31; i++) {
            many.append('"').append("a longer companion text, number ").append(i).append(" of many").append("\",");
        }
        Response together = post("/embed_all", many.append("\"I love it\"]}").toString());
        together.then().statusCode(200).body("$", hasSize(32));
        assertEquals(alone, together.jsonPath().getList("[31]"));
    }

    @Test
    void embedAllIsNeverAnsweredFromThePooledResultCacheNorFillsIt() {
        String text = "cached then asked token by token " + System.nanoTime();
        float[] pooled = Serving.floats(post("/embed", "{\"inputs\":\"" + text + "\"}").jsonPath()
                .getList("[0]", Float.class));
        Response tokens = post("/embed_all", "{\"inputs\":\"" + text + "\"}");
        tokens.then().statusCode(200).body("[0][0]", hasSize(384));
        assertTrue(tokens.jsonPath().getList("[0]").size() > 3, "token vectors, not the cached pooled one");
        float[] again = Serving.floats(post("/embed", "{\"inputs\":\"" + text + "\"}").jsonPath()
                .getList("[0]", Float.class));
        assertEquals(384, again.length);
        for (int d = 0; d < 384; d++) {
            assertEquals(pooled[d], again[d], 0f, "the pooled answer is unchanged, element " + d);
        }
    }

    @Test
    void embedAllRefusesMoreTextsThanItsBoundInTeisBatchSizeShape() {
        StringBuilder body = new StringBuilder("{\"inputs\":[");
        for (int i = 0; i < 33; i++) {
            body.append(i == 0 ? "" : ",").append("\"t\"");
        }
        expectError(post("/embed_all", body.append("]}").toString()), 413, "validation",
                "holds 33 texts; at most 32 are allowed per request (serval.tei.max-embed-all-inputs)");
        expectError(post("/embed_all", "{\"inputs\":\"x\",\"truncation_direction\":\"left\"}"), 422,
                "validation", "'left' is not supported");
        expectError(post("/embed_all", "{\"inputs\":[]}"), 422, "validation", "'inputs' cannot be empty");
        expectError(given().get("/embed_all"), 405, "validation", "use POST");
    }

    @Test
    void normalizeFalseAnswersThePooledVectorBeforeItsNormalisation() {
        JsonNode sentence = Serving.reference().get("sentences").get(3);
        String text = sentence.get("text").asText();
        float[] unit = Serving.floats(post("/embed", "{\"inputs\":\"" + text + "\"}").jsonPath()
                .getList("[0]", Float.class));
        double norm = sentence.get("norm").asDouble(); // the reference's pooled vector's length (Python)
        for (String body : List.of("{\"inputs\":\"" + text + "\",\"normalize\":false}",
                "{\"inputs\":\"" + text + "\",\"parameters\":{\"normalize\":false}}")) {
            Response raw = post("/tei/" + MODEL, body);
            raw.then().statusCode(200).body("[0]", hasSize(384));
            float[] pooled = Serving.floats(raw.jsonPath().getList("[0]", Float.class));
            double length = Math.sqrt(dot(pooled, pooled));
            assertEquals(norm, length, norm * 1e-3, "the pooled vector's length, as the reference's: " + body);
            for (int d = 0; d < unit.length; d++) {
                assertEquals(unit[d] * length, pooled[d], 1e-4, "normalised, the same vector: element " + d);
            }
        }
        // cached after the first request: the cache holds the pooled vector's length with the embedding
        float[] again = Serving.floats(post("/embed", "{\"inputs\":\"" + text + "\",\"normalize\":false}")
                .jsonPath().getList("[0]", Float.class));
        assertEquals(norm, Math.sqrt(dot(again, again)), norm * 1e-3);
    }

    private static double dot(float[] a, float[] b) {
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += (double) a[i] * b[i];
        }
        return sum;
    }

    @Test
    void acceptsTheParametersHuggingFaceHubSends() {
        // InferenceClient.feature_extraction posts its parameters at the root, None ones left out.
        post("/tei/" + MODEL, "{\"inputs\":\"hello\",\"normalize\":true,\"truncate\":false}").then().statusCode(200)
                .body("$", hasSize(1));
    }

    @Test
    void similarityIsTheCosineOfEachSentenceWithTheSource() {
        Response response = post("/similarity", "{\"inputs\":{\"source_sentence\":\"a cat sits on the mat\","
                + "\"sentences\":[\"a cat sits on the mat\",\"stock markets fell sharply\"]}}");
        response.then().statusCode(200).body("$", hasSize(2));
        List<Float> scores = response.jsonPath().getList("$", Float.class);
        assertEquals(1.0, scores.get(0), 1e-4);
        assertTrue(scores.get(1) < 0.5, "unrelated sentence: " + scores.get(1));
    }

    @Test
    void theDeploymentsOwnUrlAnswersSimilarityAsSentenceSimilaritySendsIt() {
        post("/tei/" + MODEL, "{\"inputs\":{\"source_sentence\":\"a cat\",\"sentences\":[\"a cat\"]},"
                + "\"parameters\":{\"truncate\":true}}").then().statusCode(200).body("$", hasSize(1));
    }

    @Test
    void tokenizesAsTheModelReadsAndDecodes() {
        Response tokens = post("/tokenize", "{\"inputs\":[\"Hello, world!\",\"hi\"]}");
        tokens.then().statusCode(200).body("$", hasSize(2)).body("[0]", hasSize(6))
                .body("[0][0].text", equalTo("[CLS]")).body("[0][0].special", equalTo(true))
                .body("[0][0].start", org.hamcrest.Matchers.nullValue())
                .body("[0][1].id", equalTo(7592)).body("[0][1].text", equalTo("Hello"))
                .body("[0][1].start", equalTo(0)).body("[0][1].stop", equalTo(5));
        post("/tei/" + MODEL + "/tokenize", "{\"inputs\":\"Hello\",\"add_special_tokens\":false}").then()
                .statusCode(200).body("[0]", hasSize(1));
        post("/decode", "{\"ids\":[101,7592,1010,2088,999,102]}").then().statusCode(200)
                .body("$", equalTo(List.of("hello, world!")));
        post("/tei/" + MODEL + "/decode", "{\"ids\":[[101,7592,102],[2088]],\"skip_special_tokens\":false}").then()
                .statusCode(200).body("$", equalTo(List.of("[CLS] hello [SEP]", "world")));
        expectError(post("/decode", "{\"ids\":[-1]}"), 422, "validation", "not a non-negative 32-bit integer");
        expectError(post("/decode", "{\"ids\":[]}"), 422, "validation", "'ids' must be a non-empty array");
    }

    @Test
    void infoDescribesTheDeployment() {
        given().get("/info").then().statusCode(200)
                .body("model_id", equalTo(MODEL))
                .body("model_type.embedding.pooling", equalTo("mean"))
                .body("max_client_batch_size", equalTo(2048))
                .body("auto_truncate", equalTo(true))
                .body("serval_deployment", equalTo(MODEL));
        given().get("/tei/" + MODEL + "/info").then().statusCode(200).body("model_id", equalTo(MODEL));
        given().get("/health").then().statusCode(200);
        given().get("/tei/" + MODEL + "/health").then().statusCode(200);
    }

    @Test
    void mistakesAreTeiErrorsNamingTheProblem() {
        expectError(post("/embed", "{\"inputs\":\"\"}"), 422, "validation", "'inputs' cannot be empty");
        expectError(post("/embed", "{}"), 422, "validation", "'inputs' is required");
        expectError(post("/embed", "{\"inputs\":[[101,2023]]}"), 422, "validation", "token ids are not supported");
        expectError(post("/embed", "{\"inputs\":\"x\",\"normalize\":0}"), 422, "validation",
                "'normalize' must be a boolean");
        expectError(post("/embed", "{\"inputs\":\"x\",\"truncation_direction\":\"left\"}"), 422, "validation",
                "'left' is not supported");
        expectError(post("/embed", "{\"inputs\":\"x\",\"prompt_name\":\"query\"}"), 422, "validation",
                "'prompt_name' is not supported");
        expectError(post("/embed", "{\"inputs\":\"x\",\"dimensions\":12}"), 422, "validation", "12 is not supported");
        expectError(post("/tei/nobody/embed", "{\"inputs\":\"x\"}"), 404, "validation", "nobody");
        expectError(given().get("/tei/nobody/health"), 503, "unhealthy", "'nobody' is not deployed");
        expectError(given().get("/embed"), 405, "validation", "use POST");
        expectError(post("/embed", "{\"inputs\": [\"a\""), 422, "validation", "malformed JSON");
    }

    @TestHTTPResource("/")
    URL base;

    @Test
    void hostileBodiesAreRefusedInTeisShapeWithoutReachingAModel() throws Exception {
        // Headers only: the 9 MB the request declares never come; refused on them, in TEI's error shape.
        RawHttp.Answer oversized = RawHttp.send(base, "POST /embed HTTP/1.1\r\nContent-Type: application/json"
                + "\r\nContent-Length: " + (9 << 20), new byte[0]);
        assertEquals(413, oversized.status(), oversized.text());
        assertTrue(oversized.text().contains("\"error_type\":\"validation\""), oversized.text());
        // A truncated body, a rerank on an embedding model, an id outside any vocabulary: a 4xx, never a 5xx.
        expectError(post("/embed", "{\"inputs\":[\"a\",\"b"), 422, "validation", "malformed JSON");
        expectError(post("/tei/" + MODEL + "/rerank", "{\"query\":\"q\",\"texts\":[\"d\"]}"), 422, "validation",
                "needs a text-rerank model");
        Response decoded = post("/decode", "{\"ids\":[2147483647]}");
        assertTrue(decoded.statusCode() == 200 || decoded.statusCode() == 422, decoded.asString());
        // Paths spelled around the management token through the TEI prefix: ManagementAuthTest (the token is on there).
    }

    @Test
    void tooManyInputsIsTeisBatchSizeError() {
        StringBuilder body = new StringBuilder("{\"inputs\":[");
        for (int i = 0; i < 2049; i++) {
            body.append(i == 0 ? "" : ",").append("\"t\"");
        }
        expectError(post("/embed", body.append("]}").toString()), 413, "validation", "at most 2048");
    }

    @Test
    void requestsAreMeteredAsTei() {
        post("/embed", "{\"inputs\":\"metered\"}").then().statusCode(200);
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertTrue(metrics.lines().anyMatch(line -> line.startsWith("serval_requests_total{")
                && line.contains("api=\"tei\"") && line.contains("deployment=\"" + MODEL + "\"")
                && line.contains("outcome=\"ok\"") && !line.endsWith(" 0.0")), "no tei request metered");
    }
}
