package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rolling update from version 1 to version 2 of a model under continuous load from concurrent clients: no request
 * fails, and once the update is done every response comes from version 2 (the OIP {@code model_version} is the
 * version of the replica that answered).
 */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class RollingUpdateTest {

    private static final int CLIENTS = 4;
    private static final String BODY =
            "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[0.5,-1,2,0.25]}]}";

    @TestHTTPResource("/")
    URI base;

    /** One answered request: when it was sent relative to the update's end, its status and model_version. */
    private record Answer(long sentNanos, int status, String version, String body) {
    }

    @AfterEach
    void removeDeployment() {
        ManagementApiTest.admin().delete("/api/deployments/roll");
    }

    @Test
    void aRollingUpdateUnderLoadFailsNoRequestAndEndsOnTheNewVersion() throws Exception {
        ManagementApiTest.admin().contentType("application/json").body("""
                {"model": "tiny-mlp", "version": "1", "num_replicas": 2, "predictor_threads": 1,
                 "rolling_update_fraction": 0.5, "graceful_shutdown_timeout": "5s"}""")
                .put("/api/deployments/roll").then().statusCode(201);
        Serving.awaitModelReady("roll");

        HttpClient client = HttpClient.newBuilder().executor(Runnable::run).build();
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/v2/models/roll/infer"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(BODY)).build();
        ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(CLIENTS);
        for (int c = 0; c < CLIENTS; c++) {
            Thread.ofPlatform().name("client-" + c).start(() -> {
                try {
                    while (!stop.get()) {
                        long sent = System.nanoTime();
                        try {
                            HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
                            JsonNode json = new ObjectMapper().readTree(response.body());
                            answers.add(new Answer(sent, response.statusCode(),
                                    json.path("model_version").asText(null), response.body()));
                        } catch (Exception e) {
                            answers.add(new Answer(sent, -1, null, e.toString()));
                        }
                    }
                } finally {
                    done.countDown();
                }
            });
        }
        ManagementApiTest.await("clients have been answered by version 1", () -> answers.size() >= 50);

        ManagementApiTest.admin().contentType("application/json").body("{\"version\": \"2\"}")
                .patch("/api/deployments/roll").then().statusCode(200);
        AtomicLong updatedAt = new AtomicLong();
        ManagementApiTest.await("every replica of 'roll' runs version 2 and the old ones stopped", () -> {
            Map<String, Object> view = ManagementApiTest.admin().get("/api/deployments/roll").jsonPath().getMap("");
            @SuppressWarnings("unchecked")
            Map<String, Integer> replicas = (Map<String, Integer>) view.get("replicas");
            boolean finished = "2".equals(view.get("version")) && replicas.get("running") == 2
                    && replicas.get("updating") == 0 && replicas.get("stopping") == 0 && replicas.get("starting") == 0;
            if (finished) {
                updatedAt.set(System.nanoTime());
            }
            return finished;
        });
        ManagementApiTest.await("clients have been answered after the update", () -> answers.stream()
                .filter(a -> a.sentNanos() > updatedAt.get()).count() >= 50);
        stop.set(true);
        assertTrue(done.await(30, TimeUnit.SECONDS), "clients stopped");

        List<Answer> all = new ArrayList<>(answers);
        List<Answer> failed = all.stream().filter(a -> a.status() != 200).toList();
        assertEquals(List.of(), failed.stream().limit(5).toList(), failed.size() + " of " + all.size()
                + " requests failed during the rolling update");
        Map<String, Long> byVersion = all.stream().collect(Collectors.groupingBy(Answer::version,
                Collectors.counting()));
        assertTrue(byVersion.getOrDefault("1", 0L) > 0 && byVersion.getOrDefault("2", 0L) > 0,
                "both versions answered during the run: " + byVersion);
        List<Answer> after = all.stream().filter(a -> a.sentNanos() > updatedAt.get()).toList();
        assertTrue(after.size() > 10, "requests were sent after the update: " + after.size());
        assertEquals(List.of(), after.stream().filter(a -> !"2".equals(a.version())).limit(5).toList(),
                "after the update every response comes from version 2");
        assertEquals(1, all.stream().map(a -> a.body().replaceAll("\"model_version\":\"\\d\",", "")).distinct().count(),
                "every answer carries the same outputs (versions 1 and 2 are the same network)");
    }
}
