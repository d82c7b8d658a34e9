package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reranking over HTTP with the tiny cross-encoder ({@code reranker}, text-rerank): the Jina/Cohere routes and TEI's,
 * scored as the Python reference scores each pair (scripts/make_rerank_reference.py), sorted best first.
 */
@QuarkusTest
@TestProfile(ModelKindsProfile.class)
class RerankHttpTest {

    private static final JsonNode CASE = reference().get("cases").get(0);

    private static JsonNode reference() {
        try {
            return new ObjectMapper().readTree(Path.of("..", "platform-core", "src", "test", "resources",
                    "reference", "tiny-cross-encoder-reference.json").toFile());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @BeforeEach
    void ready() {
        Serving.awaitModelReady("reranker");
    }

    private static String documents() {
        List<String> quoted = new ArrayList<>();
        for (JsonNode document : CASE.get("documents")) {
            quoted.add(new ObjectMapper().valueToTree(document.asText()).toString());
        }
        return "[" + String.join(",", quoted) + "]";
    }

    private static String query() {
        return new ObjectMapper().valueToTree(CASE.get("query").asText()).toString();
    }

    private static Response post(String path, String body) {
        return given().contentType("application/json").body(body).post(path);
    }

    /** The reference's document indexes, best score first (ties in order). */
    private static List<Integer> expectedOrder() {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < CASE.get("scores").size(); i++) {
            order.add(i);
        }
        order.sort(Comparator.comparingDouble((Integer i) -> -CASE.get("scores").get(i).asDouble()));
        return order;
    }

    @Test
    void cohereAndJinaShapesAnswerTheReferenceScoresBestFirst() {
        int tokens = 0;
        for (JsonNode ids : CASE.get("ids")) {
            tokens += ids.size();
        }
        for (String path : List.of("/v1/rerank", "/v2/rerank")) {
            Response response = post(path, "{\"model\":\"reranker\",\"query\":" + query() + ",\"documents\":"
                    + documents() + "}");
            response.then().statusCode(200)
                    .body("model", equalTo("reranker"))
                    .body("results", hasSize(CASE.get("documents").size()))
                    .body("usage.total_tokens", equalTo(tokens))
                    .body("meta.billed_units.search_units", equalTo(1));
            List<Map<String, Object>> results = response.jsonPath().getList("results");
            List<Integer> expected = expectedOrder();
            for (int rank = 0; rank < results.size(); rank++) {
                int index = (Integer) results.get(rank).get("index");
                assertEquals(expected.get(rank), index, path + " rank " + rank);
                assertEquals(CASE.get("scores").get(index).asDouble(),
                        ((Number) results.get(rank).get("relevance_score")).doubleValue(), 1e-5, path + " " + index);
            }
            if (path.equals("/v1/rerank")) { // Jina's default: the documents come back
                assertEquals(CASE.get("documents").get(expected.getFirst()).asText(),
                        response.jsonPath().getString("results[0].document.text"));
            } else {
                response.then().body("results[0].document", nullValue());
            }
        }
    }

    @Test
    void topNAndDocumentObjectsAsJinaSendsThem() {
        Response response = post("/v1/rerank", "{\"model\":\"reranker\",\"query\":\"fox\",\"top_n\":2,"
                + "\"return_documents\":false,\"documents\":[{\"text\":\"a fox\"},{\"text\":\"i love this movie\"},"
                + "\"fox fox\"]}");
        response.then().statusCode(200).body("results", hasSize(2)).body("results[0].document", nullValue());
        double first = response.jsonPath().getDouble("results[0].relevance_score");
        double second = response.jsonPath().getDouble("results[1].relevance_score");
        assertTrue(first >= second, first + " then " + second);
    }

    @Test
    void teiRerankAnswersScoresOrRawLogitsWithTheTexts() {
        for (String path : List.of("/tei/reranker/rerank", "/tei/reranker")) {
            Response response = post(path, "{\"query\":" + query() + ",\"texts\":" + documents()
                    + ",\"raw_scores\":true,\"return_text\":true}");
            response.then().statusCode(200).body("$", hasSize(CASE.get("documents").size()));
            int best = response.jsonPath().getInt("[0].index");
            assertEquals(expectedOrder().getFirst(), best, path);
            assertEquals(CASE.get("logits").get(best).asDouble(), response.jsonPath().getDouble("[0].score"), 1e-5);
            assertEquals(CASE.get("documents").get(best).asText(), response.jsonPath().getString("[0].text"));
        }
        post("/tei/reranker/rerank", "{\"query\":\"q\",\"texts\":[\"d\"]}").then().statusCode(200)
                .body("[0].text", nullValue());
        given().get("/tei/reranker/info").then().statusCode(200).body("model_type.reranker", org.hamcrest.Matchers
                .notNullValue());
    }

    @Test
    void mistakesNameTheFieldInEachDialect() {
        post("/v2/rerank", "{\"model\":\"reranker\",\"query\":\"q\",\"documents\":[]}").then().statusCode(400)
                .body("message", containsString("'documents' is an empty array"));
        post("/v2/rerank", "{\"model\":\"reranker\",\"query\":\"q\",\"documents\":[\"d\"],\"top_n\":0}").then()
                .statusCode(400).body("message", containsString("'top_n' must be a positive integer"));
        post("/v2/rerank", "{\"model\":\"classifier\",\"query\":\"q\",\"documents\":[\"d\"]}").then()
                .statusCode(400).body("message", containsString("rerank needs a text-rerank model"));
        post("/v2/rerank", "{\"model\":\"nobody\",\"query\":\"q\",\"documents\":[\"d\"]}").then().statusCode(404)
                .body("message", containsString("nobody"));
        StringBuilder nine = new StringBuilder("[");
        for (int i = 0; i < 9; i++) {
            nine.append(i == 0 ? "" : ",").append("\"d").append(i).append('"');
        }
        post("/v2/rerank", "{\"model\":\"reranker\",\"query\":\"q\",\"documents\":" + nine + "]}").then()
                .statusCode(400).body("message", containsString("max_documents_per_request"));
        post("/tei/reranker/rerank", "{\"query\":\"q\"}").then().statusCode(422)
                .body("error", containsString("'texts' is required")).body("error_type", equalTo("validation"));
        given().get("/v1/rerank").then().statusCode(405).header("Allow", "POST");
    }
}
