package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code max_tokens_per_request} at the edge: a request of many long texts against a chunking text deployment whose
 * budget is 200 tokens is refused with the engine's one error, in each API's shape (OpenAI and OIP 400, TEI 422), and
 * the deployment serves on; a request within the budget is answered.
 */
@QuarkusTest
@TestProfile(TokenBudgetHttpTest.Budgeted.class)
class TokenBudgetHttpTest {

    public static class Budgeted implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            return Map.of(
                    "serval.deployments.budgeted.model", "tiny-encoder",
                    "serval.deployments.budgeted.max-length", "16",
                    "serval.deployments.budgeted.long-inputs", "chunk",
                    "serval.deployments.budgeted.chunk-overlap", "4",
                    "serval.deployments.budgeted.max-tokens-per-request", "200");
        }
    }

    /** Some 60 tokens: 6 windows of 16 with 4 shared. */
    private static final String LONG = "the quick brown fox jumps over the lazy dog ".repeat(6).trim();
    private static final String REFUSED = "the request holds more tokens than the 200 model 'budgeted' reads per "
            + "request (max_tokens_per_request): ";

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    /** {@code count} different long texts (identical ones would share one inference through the result cache). */
    private static String texts(int count) {
        return IntStream.range(0, count).mapToObj(i -> "\"" + i + " " + LONG + "\"")
                .collect(Collectors.joining(",", "[", "]"));
    }

    @Test
    void aRequestPastTheTokenBudgetIsA400NamingItInEveryApiAndTheDeploymentServesOn() {
        given().contentType("application/json").body("{\"model\":\"budgeted\",\"input\":" + texts(50) + "}")
                .post("/v1/embeddings").then().statusCode(400)
                .body("error.message", containsString(REFUSED));
        given().contentType("application/json").body("{\"inputs\":[{\"name\":\"text\",\"shape\":[50],"
                        + "\"datatype\":\"BYTES\",\"data\":" + texts(50) + "}]}")
                .post("/v2/models/budgeted/infer").then().statusCode(400)
                .body("error", containsString(REFUSED));
        given().contentType("application/json").body("{\"inputs\":" + texts(50) + "}")
                .post("/tei/budgeted/embed").then().statusCode(422)
                .body("error", containsString(REFUSED))
                .body("error_type", equalTo("validation"));

        given().contentType("application/json").body("{\"model\":\"budgeted\",\"input\":" + texts(2) + "}")
                .post("/v1/embeddings").then().statusCode(200)
                .body("data.size()", equalTo(2));
    }
}
