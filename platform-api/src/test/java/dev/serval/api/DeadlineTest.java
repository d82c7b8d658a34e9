package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.net.Socket;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request whose deadline passes while it waits gets 504, and its text never reaches the model; one whose client goes
 * away is cancelled where it waits and gives back what it holds.
 */
@QuarkusTest
@TestProfile(GatedModelsProfile.class)
class DeadlineTest {

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

    /** Sends two requests that take both slots of the gated replica and stay on the gate; returns once they do. */
    private List<CompletableFuture<HttpResponse<String>>> occupyBothSlots(String prefix) throws InterruptedException {
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<CompletableFuture<HttpResponse<String>>> blockers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            blockers.add(client.sendAsync(HttpRequest.newBuilder(URI.create(base.toString()).resolve("/v2/models/gated/infer"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(oip(prefix + i, "")))
                    .build(), HttpResponse.BodyHandlers.ofString()));
        }
        GatedModelSource.awaitWaiting(2);
        return blockers;
    }

    private static String oip(String text, String parameters) {
        return "{" + parameters + "\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"" + text
                + "\"]}]}";
    }

    @Test
    void anExpiredRequestGets504AndNeverReachesThePredictor() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> blockers = occupyBothSlots("wait ");
        double expiredBefore = expired();

        long start = System.nanoTime();
        Response late = given().header("x-request-timeout-ms", "200").contentType("application/json")
                .body(oip("too-late-header", "")).post("/v2/models/gated/infer");
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        late.then().statusCode(504).body("error", equalTo("the request's deadline of 200 ms passed before the model answered"));
        assertTrue(tookMillis < 10_000, "answered at the deadline, not when the gate opened: " + tookMillis + " ms");

        given().contentType("application/json").body(oip("too-late-parameter", "\"parameters\":{\"timeout\":150000},"))
                .post("/v2/models/gated/infer").then().statusCode(504).body("error", containsString("deadline of 150 ms"));
        given().header("x-request-timeout-ms", "150").contentType("application/json")
                .body("{\"model\":\"gated\",\"input\":\"too-late-openai\"}").post("/v1/embeddings").then().statusCode(504)
                .body("error.code", equalTo("timeout"));

        GatedModelSource.GATE.release(2);
        for (CompletableFuture<HttpResponse<String>> blocker : blockers) {
            assertEquals(200, blocker.get(30, TimeUnit.SECONDS).statusCode());
        }
        given().contentType("application/json").body(oip("after", "")).post("/v2/models/gated/infer").then().statusCode(200);
        assertFalse(GatedModelSource.MODEL_INPUTS.contains("too-late-header"), "the expired text never ran");
        assertFalse(GatedModelSource.MODEL_INPUTS.contains("too-late-parameter"));
        assertFalse(GatedModelSource.MODEL_INPUTS.contains("too-late-openai"));
        assertEquals(expiredBefore + 2, expired(), "two OIP requests expired");
    }

    @Test
    void aRequestWhoseClientDisconnectsNeverReachesThePredictor() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> blockers = occupyBothSlots("wait d");
        double cancelledBefore = outcome("cancelled");

        // A client sends its request, which queues behind the busy replica, then goes away.
        byte[] body = oip("gone-away", "").getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.getOutputStream().write(("POST /v2/models/gated/infer HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            socket.getOutputStream().flush();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (given().get("/api/status").jsonPath().getInt("deployments.find { it.name == 'gated' }.queued_requests")
                    < 1) { // the request is queued: the server has it
                assertTrue(System.nanoTime() < deadline, "the request reached the deployment's queue");
                Thread.sleep(10); // polling the status endpoint: nothing to wait on but time
            }
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (outcome("cancelled") < cancelledBefore + 1) {
            assertTrue(System.nanoTime() < deadline, "the disconnect was noticed and metered as cancelled");
            Thread.sleep(10); // polling the metrics endpoint: nothing to wait on but time
        }

        GatedModelSource.GATE.release(2);
        for (CompletableFuture<HttpResponse<String>> blocker : blockers) {
            assertEquals(200, blocker.get(30, TimeUnit.SECONDS).statusCode());
        }
        given().contentType("application/json").body(oip("after-disconnect", "")).post("/v2/models/gated/infer").then()
                .statusCode(200);
        assertFalse(GatedModelSource.MODEL_INPUTS.contains("gone-away"), "the abandoned text never ran");
        assertTrue(GatedModelSource.MODEL_INPUTS.contains("after-disconnect"));
    }

    @Test
    void anEmbedAllWhoseClientDisconnectsGivesItsAnswersBytesBackWhileItsTextStillWaits() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> blockers = occupyBothSlots("wait e");
        long held = buffered(); // the two blockers' bodies, held until they are answered

        // An /embed_all request takes its answer's bytes from the budget when its body is read, queues behind the
        // busy replica, and its client goes away: the bytes come back then, not when the gate opens.
        byte[] body = "{\"inputs\":[\"gone-away-all\"]}".getBytes(StandardCharsets.UTF_8);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.getOutputStream().write(("POST /tei/gated/embed_all HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().write(body);
            socket.getOutputStream().flush();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (buffered() <= held || given().get("/api/status").jsonPath()
                    .getInt("deployments.find { it.name == 'gated' }.queued_requests") < 1) {
                assertTrue(System.nanoTime() < deadline, "the request holds its answer's bytes and is queued");
                Thread.sleep(10); // the server shows these only over HTTP: poll them, bounded by the deadline
            }
        }
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (buffered() != held) {
            assertTrue(System.nanoTime() < deadline, "the disconnect gave the answer's bytes back");
            Thread.sleep(10); // the byte budget shows only as a gauge over HTTP: poll it, bounded by the deadline
        }
        assertEquals(2, GatedModelSource.WAITING.get(), "the replica is still held: the bytes came back on the disconnect");

        GatedModelSource.GATE.release(2);
        for (CompletableFuture<HttpResponse<String>> blocker : blockers) {
            assertEquals(200, blocker.get(30, TimeUnit.SECONDS).statusCode());
        }
        assertFalse(GatedModelSource.MODEL_INPUTS.contains("gone-away-all"), "the abandoned text never ran");
    }

    /** {@code serval_http_buffered_bytes}: bytes of bodies and answers the byte budget holds. */
    private static long buffered() {
        OptionalDouble bytes = Serving.metric("serval_http_buffered_bytes");
        assertTrue(bytes.isPresent(), "the byte budget is exported");
        return (long) bytes.getAsDouble();
    }

    @Test
    void refusesAnInvalidTimeout() {
        given().header("x-request-timeout-ms", "soon").contentType("application/json").body(oip("x", ""))
                .post("/v2/models/gated/infer").then().statusCode(400)
                .body("error", equalTo("header x-request-timeout-ms 'soon' must be a non-negative number of milliseconds"));
        given().contentType("application/json").body(oip("x", "\"parameters\":{\"timeout\":-5},"))
                .post("/v2/models/gated/infer").then().statusCode(400).body("error", containsString("'parameters.timeout'"));
    }

    @Test
    void theLargestTimeoutIsNoLimitNotAnOverflow() {
        GatedModelSource.GATE.release(1); // this one request passes the gate
        given().contentType("application/json").body(oip("patient", "\"parameters\":{\"timeout\":" + Long.MAX_VALUE
                + "},")).post("/v2/models/gated/infer").then().statusCode(200);
    }

    private static double expired() {
        return outcome("expired");
    }

    private static double outcome(String outcome) {
        OptionalDouble count = Serving.metric("serval_requests_total{api=\"oip\",deployment=\"gated\",outcome=\""
                + outcome + "\"}");
        assertTrue(count.isPresent(), "the " + outcome + " outcome is exported");
        return count.getAsDouble();
    }
}
