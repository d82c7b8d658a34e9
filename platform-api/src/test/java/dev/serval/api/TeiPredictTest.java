package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * TEI's {@code /predict} and {@code InferenceClient.text_classification}'s body on a deployment's TEI URL, on the tiny
 * classifier ({@code classifier}): every label best first, with the model's scores, its logits, or a softmax or
 * sigmoid of them, as the Python reference computed them (scripts/make_tiny_models.py).
 */
@QuarkusTest
@TestProfile(ModelKindsProfile.class)
class TeiPredictTest {

    private static final JsonNode CASES = expected().get("cases");

    private static JsonNode expected() {
        try {
            return new ObjectMapper().readTree(Path.of("..", "platform-core", "src", "test", "resources", "reference",
                    "tiny-models-expected.json").toFile()).get("tiny-classifier");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final List<String> LABELS = List.of("negative", "neutral", "positive");

    @BeforeEach
    void ready() {
        Serving.awaitModelReady("classifier");
    }

    private static Response post(String path, String body) {
        return given().contentType("application/json").body(body).post(path);
    }

    private static void expectRow(List<Map<String, Object>> row, JsonNode values) {
        assertEquals(3, row.size());
        double previous = Double.POSITIVE_INFINITY;
        for (Map<String, Object> entry : row) {
            int index = LABELS.indexOf((String) entry.get("label"));
            double score = ((Number) entry.get("score")).doubleValue();
            assertEquals(values.get(index).asDouble(), score, 1e-5, entry.toString());
            assertEquals(true, score <= previous, "best first");
            previous = score;
        }
    }

    @Test
    void predictsOneTextOrABatchWithEveryLabelBestFirst() {
        JsonNode first = CASES.get(0);
        Response one = post("/tei/classifier/predict", "{\"inputs\":" + first.get("text") + "}");
        one.then().statusCode(200).body("$", hasSize(3)).body("[0].label", equalTo(first.get("label").asText()));
        expectRow(one.jsonPath().getList("$"), first.get("scores"));

        Response batch = post("/tei/classifier/predict", "{\"inputs\":[[" + first.get("text") + "],["
                + CASES.get(1).get("text") + "]],\"raw_scores\":true}");
        batch.then().statusCode(200).body("$", hasSize(2));
        expectRow(batch.jsonPath().getList("[0]"), first.get("logits"));
        expectRow(batch.jsonPath().getList("[1]"), CASES.get(1).get("logits"));
    }

    @Test
    void answersInferenceClientsTextClassificationOnTheDeploymentsUrl() {
        JsonNode first = CASES.get(0);
        Response response = post("/tei/classifier", "{\"inputs\":" + first.get("text")
                + ",\"parameters\":{\"top_k\":2}}");
        response.then().statusCode(200).body("$", hasSize(1)).body("[0]", hasSize(2))
                .body("[0][0].label", equalTo(first.get("label").asText()));
        Response none = post("/tei/classifier", "{\"inputs\":" + first.get("text")
                + ",\"parameters\":{\"function_to_apply\":\"none\"}}");
        expectRow(none.jsonPath().getList("[0]"), first.get("logits"));
        given().get("/tei/classifier/info").then().statusCode(200)
                .body("model_type.classifier.id2label.2", equalTo("positive"));
    }

    @Test
    void pairsAndOtherKindsAreRefusedNamingWhy() {
        post("/tei/classifier/predict", "{\"inputs\":[\"a\",\"b\"]}").then().statusCode(422)
                .body("error", containsString("text-rerank")).body("error_type", equalTo("validation"));
        post("/tei/classifier", "{\"inputs\":\"x\",\"parameters\":{\"function_to_apply\":\"tanh\"}}").then()
                .statusCode(422).body("error", containsString("function_to_apply"));
        post("/tei/mlp/predict", "{\"inputs\":\"x\"}").then().statusCode(422)
                .body("error", containsString("needs a text-classification model"));
    }
}
