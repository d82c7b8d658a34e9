package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The dashboard at {@code /ui/} and its data, open by default (docs/dashboard.md); the page itself: DashboardBrowserTest. */
@QuarkusTest
class DashboardTest {

    private static final String EMBED = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2],"
            + "\"data\":[\"a dashboard\",\"shows traffic\"]}]}";

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    static JsonNode json(Response response) {
        try {
            return new ObjectMapper().readTree(response.asString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode deployment(JsonNode feed, String name) {
        for (JsonNode deployment : feed.get("deployments")) {
            if (deployment.get("name").asText().equals(name)) {
                return deployment;
            }
        }
        return null;
    }

    /** Whether some sample of {@code series} (an array of numbers and nulls) is above 0. */
    static boolean anyPositive(JsonNode series) {
        for (JsonNode value : series) {
            if (!value.isNull() && value.asDouble() > 0) {
                return true;
            }
        }
        return false;
    }

    @Test
    void thePageAndItsFilesComeWithAPolicyThatAllowsNothingElse() {
        given().redirects().follow(false).get("/ui").then().statusCode(301).header("Location", "/ui/");
        given().get("/ui/").then().statusCode(200)
                .contentType(startsWith("text/html"))
                .header("Content-Security-Policy", containsString("default-src 'none'; script-src 'self'"))
                .header("X-Frame-Options", "DENY")
                .header("X-Content-Type-Options", "nosniff")
                .body(containsString("dashboard.js"));
        given().get("/ui/dashboard.js").then().statusCode(200).contentType(startsWith("text/javascript"));
        given().get("/ui/dashboard.css").then().statusCode(200).contentType(startsWith("text/css"));
        given().get("/ui/index.html").then().statusCode(200).contentType(startsWith("text/html"));
    }

    @Test
    void noOtherPathReachesAFile() {
        given().get("/ui/nothing.js").then().statusCode(404).body("error", containsString("/ui/"));
        given().urlEncodingEnabled(false).get("/ui/..%2fapplication.properties").then().statusCode(404);
        given().urlEncodingEnabled(false).get("/ui/%2e%2e/%2e%2e/etc/passwd").then().statusCode(404);
        given().get("/ui/serval-ui/index.html").then().statusCode(404);
        given().get("/serval-ui/index.html").then().statusCode(404);
        given().post("/ui/api/dashboard").then().statusCode(405);
        given().get("/q/openapi?format=json").then().statusCode(200)
                .body("paths", org.hamcrest.Matchers.hasKey("/ui/api/dashboard"));
    }

    @Test
    void theDataShowsEachDeploymentsStatusAndItsTrafficByOutcomeAndPhase() {
        for (int i = 0; i < 10; i++) {
            given().contentType("application/json").body(EMBED).post(Serving.INFER).then().statusCode(200);
            given().contentType("application/json").body("{\"inputs\":[]}").post(Serving.INFER)
                    .then().statusCode(400);
        }
        Response answer = Serving.await("the dashboard's samples of the requests just sent",
                () -> given().get("/ui/api/dashboard"), response -> {
                    JsonNode history = deployment(json(response), Serving.MODEL).get("history");
                    return history != null
                            && anyPositive(history.at("/requestsPerSecond/ok"))
                            && anyPositive(history.at("/requestsPerSecond/bad_request"))
                            && anyPositive(history.at("/latencyMs/total/p99"))
                            && anyPositive(history.at("/latencyMs/inference/p50"))
                            && anyPositive(history.at("/inputsPerRequest/mean"))
                            && anyPositive(history.at("/cache/hitRate")); // the same text, ten times
                });
        answer.then().statusCode(200).header("Cache-Control", "no-store")
                .body("server.live", equalTo(true))
                .body("server.ready", equalTo(true))
                .body("sampleIntervalMs", equalTo(1000))
                .body("historyMs", equalTo(300_000));
        JsonNode feed = json(answer);
        JsonNode minilm = deployment(feed, Serving.MODEL);
        assertEquals("text-embedding", minilm.get("kind").asText());
        assertEquals(1, minilm.at("/replicas/running").asInt());
        assertEquals("single", minilm.at("/batching/mode").asText());
        JsonNode history = minilm.get("history");
        int samples = history.get("t").size();
        assertTrue(samples >= 1 && samples <= 300, "samples kept: " + samples);
        for (String column : new String[] {"/requestsPerSecond/ok", "/requestsPerSecond/error",
            "/latencyMs/queue/p50", "/latencyMs/batch/p99", "/batchSize/mean", "/inputsPerRequest/mean",
            "/cache/hitRate"}) {
            assertEquals(samples, history.at(column).size(), column);
        }
    }

    @Test
    void afterGivesOnlyNewerSamples() {
        JsonNode all = json(Serving.await("a sample", () -> given().get("/ui/api/dashboard"),
                response -> deployment(json(response), Serving.MODEL).at("/history/t").size() > 0));
        JsonNode times = deployment(all, Serving.MODEL).at("/history/t");
        long last = times.get(times.size() - 1).asLong();
        JsonNode newer = deployment(json(given().get("/ui/api/dashboard?after=" + last)), Serving.MODEL);
        for (JsonNode t : newer.at("/history/t")) {
            assertTrue(t.asLong() > last, t + " is not after " + last);
        }
        assertEquals(deployment(all, Serving.MODEL).at("/history/id"), newer.at("/history/id"));
    }

    @Test
    void aMalformedAfterIsRefusedNamingIt() {
        for (String query : new String[] {"after=abc", "after=-1", "after=1&after=2", "after=1234567890123456",
            "after="}) {
            given().get("/ui/api/dashboard?" + query).then().statusCode(400)
                    .body("error", containsString("after must be"));
        }
    }
}
