package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
@TestProfile(GatedModelsProfile.class)
class ReadinessAndOverloadTest {

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void closeGate() {
        Serving.awaitModelReady("gated");
        GatedModelSource.GATE.drainPermits();
    }

    @AfterEach
    void openGate() {
        GatedModelSource.GATE.release(1000);
    }

    private static String oip(String text) {
        return "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"" + text + "\"]}]}";
    }

    @Test
    void isNotReadyUntilTheModelHasLoadedAndWarmedUp() {
        given().get("/q/health/started").then().statusCode(503);
        given().get("/v2/models/slow/ready").then().statusCode(503).body("ready", equalTo(false));
        given().get("/v2/health/ready").then().statusCode(503).body("ready", equalTo(false));
        given().get("/q/health/ready").then().statusCode(503).body("checks[0].data.slow", equalTo("LOADING"));
        given().get("/v2/models/slow").then().statusCode(503).body("error", containsString("still loading"));
        given().contentType("application/json").body(oip("early")).post("/v2/models/slow/infer").then()
                .statusCode(503).header("Retry-After", "1").body("error", equalTo("model 'slow' is still loading"));
        given().contentType("application/json").body("{\"model\":\"slow\",\"input\":\"early\"}").post("/v1/embeddings")
                .then().statusCode(503).body("error.code", equalTo("model_not_ready"));
        given().get("/v2/health/live").then().statusCode(200);
        given().get("/q/health/live").then().statusCode(200);

        GatedModelSource.LOAD_GATE.release();
        Serving.awaitModelReady("slow");

        given().contentType("application/json").body(oip("now")).post("/v2/models/slow/infer").then()
                .log().ifValidationFails().statusCode(200);
        Serving.awaitModelReady("fragile");
        given().get("/v2/health/ready").then().statusCode(200);
        given().get("/q/health/ready").then().statusCode(200).body("checks[0].data.slow", equalTo("READY"));
        given().get("/q/health/started").then().statusCode(200);
    }

    @Test
    void readinessGoesDownWhenADeploymentLosesAllItsReplicasAndComesBack() {
        Serving.awaitModelReady("fragile");

        GatedModelSource.FRAGILE_BROKEN = true;
        try {
            awaitStatus("/v2/models/fragile/ready", 503);
            given().get("/v2/health/ready").then().statusCode(503);
            given().get("/q/health/ready").then().statusCode(503).body("checks[0].status", equalTo("DOWN"));
            given().get("/q/health/live").then().statusCode(200);
            given().get("/api/status").then().statusCode(200)
                    .body("deployments.find { it.name == 'fragile' }.ready", equalTo(false))
                    .body("deployments.find { it.name == 'fragile' }.recent_errors[-1].message",
                            containsString("the model failed on 'probe'"));
        } finally {
            GatedModelSource.FRAGILE_BROKEN = false;
        }
        Serving.awaitModelReady("fragile");
        given().get("/api/status").then()
                .body("deployments.find { it.name == 'fragile' }.replicas.running", equalTo(1));
    }

    private static void awaitStatus(String path, int status) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (given().get(path).statusCode() != status) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(path + " never answered " + status);
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void aFloodedDeploymentRefusesTheExcessAtOnceWithRetryAfterAndServesWhatItAdmitted() throws Exception {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<CompletableFuture<HttpResponse<String>>> admitted = new ArrayList<>();
        for (int i = 0; i < 6; i++) { // 2 run (and block) on the replica, 4 fill the deployment queue
            admitted.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base.toString()).resolve("/v2/models/gated/infer"))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(oip("wait " + i))).build(), HttpResponse.BodyHandlers.ofString()));
            if (i == 1) {
                GatedModelSource.awaitWaiting(2);
            }
        }
        awaitQueueFull();

        Response refused = given().contentType("application/json").body(oip("one too many")).post("/v2/models/gated/infer");
        refused.then().statusCode(503).body("error", containsString("max-queued-requests 4"));
        assertTrue(Long.parseLong(refused.header("Retry-After")) >= 0, refused.header("Retry-After"));
        assertTrue(Long.parseLong(refused.header("retry-after-ms")) >= 1, refused.header("retry-after-ms"));
        Response refusedOpenAi = given().contentType("application/json").body("{\"model\":\"gated\",\"input\":\"x\"}")
                .post("/v1/embeddings");
        refusedOpenAi.then().statusCode(429).header("Retry-After", org.hamcrest.Matchers.notNullValue())
                .header("retry-after-ms", org.hamcrest.Matchers.notNullValue())
                .body("error.code", equalTo("rate_limit_exceeded"));
        // Refused on its headers: the 100 kB body it declares is never sent, and the answer does not wait for it.
        RawHttp.Answer onHeaders = RawHttp.send(base, "POST /v2/models/gated/infer HTTP/1.1\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100000", new byte[0]);
        assertEquals(503, onHeaders.status(), onHeaders.text());
        assertTrue(onHeaders.text().contains("max-queued-requests 4"), onHeaders.text());
        assertTrue(onHeaders.text().toLowerCase(java.util.Locale.ROOT).contains("retry-after:"), onHeaders.text());

        GatedModelSource.GATE.release(6);
        for (CompletableFuture<HttpResponse<String>> response : admitted) {
            HttpResponse<String> answer = response.get(30, TimeUnit.SECONDS);
            assertEquals(200, answer.statusCode(), answer.body());
        }
        given().get("/q/metrics").then().body(containsString(
                "serval_requests_total{api=\"oip\",deployment=\"gated\",outcome=\"rejected\"} 2.0"));
    }


    /** Waits until one more text would not fit: probing with a request the gated model answers at once. */
    private static void awaitQueueFull() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            String metrics = given().get("/q/metrics").asString();
            if (metrics.contains("serval_queued_requests{deployment=\"gated\"} 4.0")) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the gated deployment's queue never filled");
            }
            Thread.sleep(10); // the requests are in flight on other connections
        }
    }
}
