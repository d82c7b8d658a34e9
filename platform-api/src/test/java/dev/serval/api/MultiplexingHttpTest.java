package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.not;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.common.http.TestHTTPResource;
import io.restassured.response.Response;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Model multiplexing over HTTP: one deployment serves every repository model its glob matches, by the model's own
 * name through both APIs (and Ray's {@code serval-model-id} header), loads each on its first request, keeps at most
 * {@code max_models_per_replica} per replica, follows the repository (new versions roll, removed models go), and
 * refuses names with two addresses.
 */
@QuarkusTest
@TestProfile(MultiplexingProfile.class)
class MultiplexingHttpTest {

    private static final String TEXT = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],"
            + "\"data\":[\"hello multiplexing\"]}]}";

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static Response infer(String path) {
        return given().contentType("application/json").body(TEXT).post(path);
    }

    @Test
    void modelsLoadOnTheirFirstRequestThroughBothApisAndTheLeastRecentlyUsedIsUnloaded() {
        infer("/v2/models/tenant-a/infer").then().statusCode(200)
                .body("model_name", equalTo("tenant-a"))
                .body("outputs[0].name", equalTo("embedding"));
        given().contentType("application/json").body("{\"model\":\"tenant-b\",\"input\":\"hello\"}")
                .post("/v1/embeddings").then().statusCode(200)
                .body("model", equalTo("tenant-b"))
                .body("data", hasSize(1));
        // Ray's way: the deployment's own path, the model in a header.
        given().contentType("application/json").header("serval-model-id", "tenant-a").body(TEXT)
                .post("/v2/models/tenants/infer").then().statusCode(200)
                .body("model_name", equalTo("tenant-a"));
        infer("/v2/models/tenant-c/infer").then().statusCode(200).body("model_name", equalTo("tenant-c"));

        // One replica of at most two: tenant-b, used least recently, made room for tenant-c.
        given().get("/api/deployments/tenants").then().statusCode(200)
                .body("kind", equalTo("multiplexed"))
                .body("multiplex.models_matching", equalTo(3))
                .body("multiplex.models_loaded", equalTo(2))
                .body("multiplex.replicas[0].models", equalTo(List.of("tenant-c", "tenant-a")))
                .body("multiplex.models.find { it.name == 'tenant-b' }.replicas", equalTo(List.of()))
                .body("multiplex.models.find { it.name == 'tenant-b' }.state", equalTo("UNLOADED"))
                .body("multiplex.models.find { it.name == 'tenant-c' }.state", equalTo("READY"))
                .body("config.model", equalTo("tenant-*"))
                .body("config.max_models_per_replica", equalTo(2))
                .body("config", not(org.hamcrest.Matchers.hasKey("version")));
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertLine(metrics, "serval_multiplex_models_loaded{deployment=\"tenants\"} 2.0");
        assertLine(metrics, "serval_multiplex_loads_total{deployment=\"tenants\"} 3.0");
        assertLine(metrics, "serval_multiplex_evictions_total{deployment=\"tenants\"} 1.0");
        assertLine(metrics, "serval_multiplex_load_seconds_count{deployment=\"tenants\"} 3.0");
        // Each model is metered under its own name.
        org.junit.jupiter.api.Assertions.assertTrue(metrics.contains("deployment=\"tenant-b\""), "tenant-b's meters");

        // tenant-b comes back, in place of tenant-a (now the least recently used).
        infer("/v2/models/tenant-b/infer").then().statusCode(200);
        given().get("/api/deployments/tenants").then()
                .body("multiplex.replicas[0].models", equalTo(List.of("tenant-b", "tenant-c")));
        given().get("/api/status").then().statusCode(200)
                .body("deployments.find { it.name == 'tenants' }.multiplex.models_loaded", equalTo(2));
    }

    private static void assertLine(String metrics, String line) {
        org.junit.jupiter.api.Assertions.assertTrue(metrics.lines().anyMatch(l -> l.equals(line)),
                "no line '" + line + "' in /q/metrics: " + metrics.lines()
                        .filter(l -> l.startsWith("serval_multiplex")).toList());
    }

    @Test
    void unknownNamesAreA404NamingThemAndTheDeploymentItselfNeedsAModel() {
        infer("/v2/models/tenant-zzz/infer").then().statusCode(404).body("error", containsString("tenant-zzz"));
        given().get("/v2/models/tenant-zzz/ready").then().statusCode(404);
        given().get("/v2/models/tenant-zzz").then().statusCode(404);
        given().contentType("application/json").body("{\"model\":\"tenant-zzz\",\"input\":\"x\"}")
                .post("/v1/embeddings").then().statusCode(404).body("error.message", containsString("tenant-zzz"));
        given().contentType("application/json").header("serval-model-id", "tenant-zzz").body(TEXT)
                .post("/v2/models/tenants/infer").then().statusCode(404).body("error", containsString("tenant-zzz"));
        infer("/v2/models/tenants/infer").then().statusCode(400)
                .body("error", containsString("serval-model-id"));
        // A model id is a name among the last scan's, never a path or a glob: nothing else is looked at.
        for (String hostile : List.of("../all-minilm-l6-v2", "tenant-*", "tenant-a/../tenant-b", "tenant-a%00")) {
            given().contentType("application/json").header("serval-model-id", hostile).body(TEXT)
                    .post("/v2/models/tenants/infer").then().statusCode(404);
        }
        given().get("/v2/models/tenant-b/ready").then().statusCode(200).body("ready", equalTo(true));
        given().get("/v2/models/tenants").then().statusCode(200)
                .body("models", equalTo(List.of("tenant-a", "tenant-b", "tenant-c")));
    }

    @Test
    void metadataOfAModelNoReplicaHoldsLoadsIt() throws IOException {
        TestRepository.encoders("meta-a");
        given().contentType("application/json").body("{\"model\":\"meta-*\",\"predictor_threads\":1}")
                .put("/api/deployments/meta").then().statusCode(201).body("kind", equalTo("multiplexed"));
        given().post("/v2/repository/index").then().statusCode(200)
                .body("find { it.name == 'meta-a' }.state", equalTo("UNAVAILABLE"))
                .body("find { it.name == 'meta-a' }.reason", containsString("multiplexed by deployment 'meta': "
                        + "loaded on its first request"));
        given().get("/v2/models/meta-a").then().statusCode(200)
                .body("name", equalTo("meta-a"))
                .body("inputs[0].name", equalTo("text"))
                .body("outputs[0].name", equalTo("embedding"));
        given().get("/api/deployments/meta").then().body("multiplex.models_loaded", equalTo(1));
        given().post("/v2/repository/index").then().body("find { it.name == 'meta-a' }.state", equalTo("READY"));
        given().delete("/api/deployments/meta").then().statusCode(200);
        infer("/v2/models/meta-a/infer").then().statusCode(404);
    }

    @Test
    void aNewVersionRollsItsModelAndARemovedModelStopsMatching() throws Exception {
        TestRepository.encoders("roll-a");
        given().contentType("application/json").body("{\"model\":\"roll-*\",\"predictor_threads\":1}")
                .put("/api/deployments/rolling").then().statusCode(201);
        infer("/v2/models/roll-a/infer").then().statusCode(200).body("model_version", equalTo("1"));

        Path versions = TestRepository.PATH.resolve("roll-a");
        copyFolder(versions.resolve("1"), versions.resolve("2"));
        Serving.await("version 2 serving", () -> infer("/v2/models/roll-a/infer"), r -> r.statusCode() == 200
                && "2".equals(r.jsonPath().getString("model_version")));
        given().get("/api/deployments/rolling").then()
                .body("multiplex.models.find { it.name == 'roll-a' }.version", equalTo("2"));

        deleteFolder(versions);
        Serving.await("roll-a gone", () -> infer("/v2/models/roll-a/infer"), r -> r.statusCode() == 404);
        given().get("/api/deployments/rolling").then().body("multiplex.models_matching", equalTo(0))
                .body("multiplex.models", hasSize(0));
        given().delete("/api/deployments/rolling").then().statusCode(200);
    }

    @Test
    void anAutoscaledMultiplexedDeploymentGoesToZeroWhenIdleAndTheNextRequestBringsItsModelBack() {
        TestRepository.encoders("auto-a");
        given().contentType("application/json")
                .body("{\"model\":\"auto-*\",\"predictor_threads\":1,\"autoscaling\":{\"min_replicas\":0,"
                        + "\"max_replicas\":2,\"upscale_delay\":\"0s\",\"downscale_delay\":\"500ms\","
                        + "\"look_back_period\":\"200ms\"}}")
                .put("/api/deployments/auto").then().statusCode(201)
                .body("multiplex.num_replicas", equalTo(1));
        infer("/v2/models/auto-a/infer").then().statusCode(200);
        Serving.await("auto at zero", () -> given().get("/api/deployments/auto"),
                r -> r.jsonPath().getInt("multiplex.num_replicas") == 0
                && r.jsonPath().getInt("multiplex.models_loaded") == 0);
        given().get("/api/deployments/auto").then().body("autoscaling.last_decision.to", equalTo(0));

        infer("/v2/models/auto-a/infer").then().statusCode(200); // waits for the replica the autoscaler starts
        given().get("/api/deployments/auto").then().body("multiplex.num_replicas", equalTo(1))
                .body("multiplex.models_loaded", equalTo(1));
        given().delete("/api/deployments/auto").then().statusCode(200);
    }

    @Test
    void aClientThatGoesAwayMidBodyDoesNotKeepItsModelPinned() throws IOException {
        TestRepository.encoders("solo-a", "solo-b");
        given().contentType("application/json")
                .body("{\"model\":\"solo-*\",\"predictor_threads\":1,\"max_models_per_replica\":1}")
                .put("/api/deployments/solo").then().statusCode(201);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v2/models/solo-a/infer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1000\r\n\r\n{\"inputs\":[").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // The headers pinned solo-a and placed it on the only replica; the body never comes.
            Serving.await("solo-a placed", () -> given().get("/api/deployments/solo"),
                    r -> List.of(0).equals(r.jsonPath().getList("multiplex.models.find { it.name == 'solo-a' }.replicas")));
        }
        // Its pin went with the connection: solo-b takes its place. A leaked pin would leave solo-b waiting for room
        // until its deadline (504).
        given().contentType("application/json").header("x-request-timeout-ms", "10000").body(TEXT)
                .post("/v2/models/solo-b/infer").then().statusCode(200);
        given().get("/api/deployments/solo").then().body("multiplex.replicas[0].models", equalTo(List.of("solo-b")));
        given().delete("/api/deployments/solo").then().statusCode(200);
    }

    @Test
    void aModelLargerThanTheMemoryBoundIsRefusedNamingIt() {
        TestRepository.encoders("big-a");
        given().contentType("application/json")
                .body("{\"model\":\"big-*\",\"predictor_threads\":1,\"max_model_memory\":\"1Ki\"}")
                .put("/api/deployments/big").then().statusCode(201).body("config.max_model_memory", equalTo(1024));
        infer("/v2/models/big-a/infer").then().statusCode(503)
                .body("error", containsString("max_model_memory (1024 bytes)"));
        given().delete("/api/deployments/big").then().statusCode(200);
    }

    @Test
    void namesWithTwoAddressesAndMisplacedFieldsAreRefused() {
        given().contentType("application/json").body("{\"model\":\"noop\"}").put("/api/deployments/tenant-z")
                .then().statusCode(400).body("error", containsString("matches the name of deployment 'tenant-z'"));
        given().contentType("application/json").body("{\"model\":\"tenant-a*\"}").put("/api/deployments/other")
                .then().statusCode(400).body("error", containsString("'tenant-a' matches both"));
        given().contentType("application/json").body("{\"model\":\"noop\",\"max_models_per_replica\":2}")
                .put("/api/deployments/plain").then().statusCode(400)
                .body("error", containsString("max_models_per_replica"));
        given().contentType("application/json").body("{\"model\":\"x-*\",\"version\":\"2\"}")
                .put("/api/deployments/versioned").then().statusCode(400)
                .body("error", containsString("newest version"));
        given().contentType("application/json").body("{\"model\":\"noop\"}").patch("/api/deployments/tenants")
                .then().statusCode(400).body("error", containsString("between one model and a glob"));
        given().contentType("application/json").body("{\"max_models_per_replica\":0}").patch("/api/deployments/tenants")
                .then().statusCode(400).body("error", containsString("max_models_per_replica"));
        given().contentType("application/json").body("{\"model\":\"z*\"}").put("/api/deployments/zed")
                .then().statusCode(400).body("error", containsString("matches the deployment's own name"));
        given().get("/api/config").then().body("deployments.name", hasItem("tenants"));
    }

    private static void copyFolder(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path file : files.toList()) {
                Files.copy(file, to.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private static void deleteFolder(Path folder) throws IOException {
        try (Stream<Path> files = Files.walk(folder)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(file);
            }
        }
    }
}
