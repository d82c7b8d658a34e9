package dev.serval.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;

/**
 * Kubernetes stops a pod with SIGTERM: the request the container is working on at that moment must still get
 * its full answer, and the process must then exit 0 within the drain timeout (quarkus.shutdown.timeout).
 */
class GracefulShutdownIT {

    /** Texts in the long request: 2-3 s of work for two predictor threads, well inside the 10 s per-deployment drain. */
    private static final int TEXTS = 40;

    @Test
    void finishesTheRequestInFlightAtSigtermThenExitsZeroWithinTheDrainTimeout() throws Exception {
        GenericContainer<?> serval =
                ServalImage.container("serval-shutdown", ServalImage.chartDeploymentsFile(List.of()));
        serval.start();
        try {
            Http http = new Http(serval.getHost(), serval.getMappedPort(ServalImage.HTTP_PORT));
            String token = ServalImage.generatedToken(serval);
            DockerClient docker = serval.getDockerClient();
            String id = serval.getContainerId();

            CompletableFuture<HttpResponse<String>> inFlight = http.postJsonAsync("/v1/embeddings", longRequest());
            awaitInFlight(http, token);
            assertFalse(inFlight.isDone(), "the request finished before SIGTERM; make it longer");

            long sigterm = System.nanoTime();
            docker.killContainerCmd(id).withSignal("SIGTERM").exec();
            Integer exit = docker.waitContainerCmd(id).exec(new WaitContainerResultCallback())
                    .awaitStatusCode(ServalImage.DRAIN_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS);
            Duration drained = Duration.ofNanos(System.nanoTime() - sigterm);

            HttpResponse<String> response = inFlight.get(10, TimeUnit.SECONDS);
            assertEquals(200, response.statusCode(), response.body());
            JsonNode data = Http.parse(response).get("data");
            assertEquals(TEXTS, data.size());
            assertEquals(384, data.get(TEXTS - 1).get("embedding").size());
            assertEquals(0, exit, "exit status after SIGTERM");
            assertTrue(drained.compareTo(ServalImage.DRAIN_TIMEOUT) < 0,
                    "exited " + drained.toMillis() + " ms after SIGTERM, drain timeout " + ServalImage.DRAIN_TIMEOUT);
        } finally {
            serval.stop();
        }
    }

    /** One OpenAI embeddings request of {@link #TEXTS} distinct texts of about 200 tokens each. */
    private static String longRequest() {
        StringBuilder body = new StringBuilder("{\"model\":\"all-minilm-l6-v2\",\"input\":[");
        for (int t = 0; t < TEXTS; t++) {
            body.append(t == 0 ? "\"" : ",\"");
            for (int w = 0; w < 180; w++) {
                body.append("serval ").append(t * 1000 + w).append(' ');
            }
            body.append('"');
        }
        return body.append("]}").toString();
    }

    /** Waits (up to 10 s) until /api/status shows the request being served. */
    private static void awaitInFlight(Http http, String token) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String status = "";
        while (System.nanoTime() < deadline) {
            status = http.get("/api/status", token).body();
            JsonNode deployment = Http.JSON.readTree(status).get("deployments").get(0);
            if (deployment.get("in_flight_requests").asInt() + deployment.get("queued_requests").asInt() > 0) {
                return;
            }
            Thread.sleep(20); // polling the status endpoint: there is nothing to wait on but time
        }
        throw new AssertionError("the long request never showed up in /api/status: " + status);
    }
}
