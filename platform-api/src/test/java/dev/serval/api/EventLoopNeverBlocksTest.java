package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
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

/**
 * Proves that inference never runs on, or blocks, a Vert.x event loop. With the server on two event loops,
 * three times as many requests as event loops are held inside a model whose predictors are stuck on a gate. If any part of
 * the request path waited for inference on its event loop, every event loop would be stuck and the probes below
 * (liveness, and a real embedding on another deployment) could not be answered; they must answer while the
 * gate is still closed. The model also records the threads it ran on: only Serval's predictor threads.
 */
@QuarkusTest
@TestProfile(GatedModelsProfile.class)
class EventLoopNeverBlocksTest {

    /** Both predictors busy and the queue full: three times as many requests as event loops. */
    private static final int HELD_REQUESTS = 6;

    @TestHTTPResource("/")
    URL base;

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void ready() {
        Serving.awaitModelReady(Serving.MODEL);
        Serving.awaitModelReady("gated");
        GatedModelSource.GATE.drainPermits();
        GatedModelSource.MODEL_THREADS.clear();
    }

    @AfterEach
    void openGate() {
        GatedModelSource.GATE.release(1000);
    }

    @Test
    void eventLoopsKeepAnsweringWhilePredictorsAreBusy() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        for (int i = 0; i < HELD_REQUESTS; i++) {
            // A fresh client per request: one connection each, spread over both event loops.
            HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            held.add(own.sendAsync(post("/v2/models/gated/infer",
                    "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"wait " + i + "\"]}]}"),
                    HttpResponse.BodyHandlers.ofString()));
        }
        GatedModelSource.awaitWaiting(2);

        for (int i = 0; i < 8; i++) {
            HttpResponse<String> live = client.send(get("/v2/health/live"), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, live.statusCode());
        }
        HttpResponse<String> embedded = client.send(post("/v1/embeddings",
                "{\"model\":\"" + Serving.MODEL + "\",\"input\":\"answered while the gated model is stuck\"}"),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, embedded.statusCode(), embedded.body());
        assertTrue(held.stream().noneMatch(CompletableFuture::isDone), "the gate still holds every gated request");

        GatedModelSource.GATE.release(HELD_REQUESTS);
        for (CompletableFuture<HttpResponse<String>> response : held) {
            assertEquals(200, response.get(30, TimeUnit.SECONDS).statusCode());
        }
        assertFalse(GatedModelSource.MODEL_THREADS.isEmpty());
        for (String thread : GatedModelSource.MODEL_THREADS) { // other gated deployments' probes show up here too
            assertTrue(thread.startsWith("serval-"), "model ran on " + thread);
            assertFalse(thread.contains("eventloop"), "model ran on an event loop: " + thread);
        }
        assertTrue(GatedModelSource.MODEL_THREADS.stream().anyMatch(thread -> thread.startsWith("serval-gated-")));
    }

    private HttpRequest get(String path) {
        return HttpRequest.newBuilder(URI.create(base.toString()).resolve(path)).timeout(Duration.ofSeconds(10)).GET().build();
    }

    private HttpRequest post(String path, String json) {
        return HttpRequest.newBuilder(URI.create(base.toString()).resolve(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build();
    }

}
