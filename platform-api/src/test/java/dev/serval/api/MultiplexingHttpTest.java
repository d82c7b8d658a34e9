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
    void metadataOfAModelNoReplicaHoldsLoadsNothing() throws IOException {
        TestRepository.encoders("meta-a");
        given().contentType("application/json").body("{\"model\":\"meta-*\",\"predictor_threads\":1}")
                .put("/api/deployments/meta").then().statusCode(201).body("kind", equalTo("multiplexed"));
        given().post("/v2/repository/index").then().statusCode(200)
                .body("find { it.name == 'meta-a' }.state", equalTo("UNAVAILABLE"))
                .body("find { it.name == 'meta-a' }.reason", containsString("multiplexed by deployment 'meta': "
                        + "loaded on its first request"));
        given().get("/v2/models/meta-a").then().statusCode(200)
                .body("name", equalTo("meta-a"))
                .body("versions", equalTo(List.of("1")))
                .body("kind", equalTo("text-embedding"))
                .body("inputs[0].name", equalTo("text"))
                .body("outputs", hasSize(0)); // its graph tells them, once loaded
        given().get("/api/deployments/meta").then().body("multiplex.models_loaded", equalTo(0));
        infer("/v2/models/meta-a/infer").then().statusCode(200);
        given().get("/v2/models/meta-a").then().statusCode(200)
                .body("inputs[0].name", equalTo("text"))
                .body("outputs[0].name", equalTo("embedding"));
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
    void aClientStillSendingItsBodyNeitherLoadsItsModelNorKeepsItPinned() throws IOException {
        TestRepository.encoders("solo-a", "solo-b");
        given().contentType("application/json")
                .body("{\"model\":\"solo-*\",\"predictor_threads\":1,\"max_models_per_replica\":1}")
                .put("/api/deployments/solo").then().statusCode(201);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v2/models/solo-a/infer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1000\r\n\r\n{\"inputs\":[").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // Its headers came, its body does not: solo-a is not pinned for it, so solo-b takes the only replica. A
            // pin on the headers would leave solo-b waiting for room until its deadline (504).
            given().contentType("application/json").header("x-request-timeout-ms", "10000").body(TEXT)
                    .post("/v2/models/solo-b/infer").then().statusCode(200);
            given().get("/api/deployments/solo").then()
                    .body("multiplex.replicas[0].models", equalTo(List.of("solo-b")))
                    .body("multiplex.models.find { it.name == 'solo-a' }.state", equalTo("UNLOADED"));
        }
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

    @Test
    void aRequestRefusedBeforeItRunsLoadsNothingAndEvictsNothing() throws IOException {
        TestRepository.encoders("lazy-a", "lazy-b");
        given().contentType("application/json")
                .body("{\"model\":\"lazy-*\",\"predictor_threads\":1,\"max_models_per_replica\":1}")
                .put("/api/deployments/lazy").then().statusCode(201);
        infer("/v2/models/lazy-a/infer").then().statusCode(200);
        // lazy-b, asked for by requests that are refused, and by a metadata read: none of them may take lazy-a's place.
        given().contentType("text/plain").post("/v2/models/lazy-b/infer").then().statusCode(415);
        given().contentType("application/json").body("{\"inputs\":").post("/v2/models/lazy-b/infer").then()
                .statusCode(400);
        given().contentType("application/json").header("serval-model-id", "lazy-b").body("[]")
                .post("/v2/models/lazy/infer").then().statusCode(400);
        given().contentType("application/json").body("{\"model\":\"lazy-b\",\"input\":7}")
                .post("/v1/embeddings").then().statusCode(400);
        given().contentType("application/json").header("x-request-timeout-ms", "-1").body(TEXT)
                .post("/v2/models/lazy-b/infer").then().statusCode(400);
        given().get("/v2/models/lazy-b").then().statusCode(200)
                .body("name", equalTo("lazy-b"))
                .body("versions", equalTo(List.of("1")))
                .body("inputs[0].name", equalTo("text"));
        given().get("/api/deployments/lazy").then()
                .body("multiplex.replicas[0].models", equalTo(List.of("lazy-a")))
                .body("multiplex.models.find { it.name == 'lazy-b' }.state", equalTo("UNLOADED"));
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertLine(metrics, "serval_multiplex_loads_total{deployment=\"lazy\"} 1.0");
        // A valid request loads it.
        infer("/v2/models/lazy-b/infer").then().statusCode(200);
        given().get("/api/deployments/lazy").then().body("multiplex.replicas[0].models", equalTo(List.of("lazy-b")));
        given().delete("/api/deployments/lazy").then().statusCode(200);
    }

    @Test
    void aNewestVersionThatDoesNotResolveLeavesTheOlderOneServing() throws Exception {
        fresh("half-a");
        given().contentType("application/json").body("{\"model\":\"half-*\",\"predictor_threads\":1}")
                .put("/api/deployments/half").then().statusCode(201);
        infer("/v2/models/half-a/infer").then().statusCode(200).body("model_version", equalTo("1"));

        // A version folder still being copied: its descriptor came, its model file not yet.
        Path copying = TestRepository.PATH.resolve("half-a").resolve("2");
        Files.createDirectories(copying);
        Files.copy(copying.resolveSibling("1").resolve("model.yaml"), copying.resolve("model.yaml"));
        Serving.await("the rescan that sees version 2", () -> given().get("/api/deployments/half"),
                r -> r.jsonPath().getInt("multiplex.models_matching") == 0 || !notServed(r).isEmpty());
        infer("/v2/models/half-a/infer").then().statusCode(200).body("model_version", equalTo("1"));
        given().get("/api/deployments/half").then()
                .body("multiplex.models_matching", equalTo(1))
                .body("multiplex.not_served[0].model", equalTo("half-a"))
                .body("multiplex.not_served[0].version", equalTo("2"))
                .body("multiplex.not_served[0].problem", containsString("model.onnx"));

        // Once it is complete, it rolls.
        copyFolder(copying.resolveSibling("1"), copying);
        Serving.await("version 2 serving", () -> infer("/v2/models/half-a/infer"), r -> r.statusCode() == 200
                && "2".equals(r.jsonPath().getString("model_version")));
        given().get("/api/deployments/half").then().body("multiplex.not_served", hasSize(0));
        given().delete("/api/deployments/half").then().statusCode(200);
    }

    @Test
    void aNewVersionOfAnotherKindIsRefusedNamingBothAndTheOldOneServes() throws Exception {
        fresh("kind-a");
        given().contentType("application/json").body("{\"model\":\"kind-*\",\"predictor_threads\":1}")
                .put("/api/deployments/kinds").then().statusCode(201);
        infer("/v2/models/kind-a/infer").then().statusCode(200).body("outputs[0].name", equalTo("embedding"));

        Path noop = TestRepository.PATH.resolve("kind-a").resolve("2");
        Files.createDirectories(noop);
        Files.writeString(noop.resolve("model.yaml"), "kind: noop\n");
        Serving.await("the rescan that sees version 2", () -> given().get("/api/deployments/kinds"),
                r -> !"1".equals(r.jsonPath().getString("multiplex.models.find { it.name == 'kind-a' }.version"))
                        || !notServed(r).isEmpty());
        infer("/v2/models/kind-a/infer").then().statusCode(200)
                .body("model_version", equalTo("1"))
                .body("outputs[0].name", equalTo("embedding"));
        given().get("/api/deployments/kinds").then()
                .body("multiplex.models.find { it.name == 'kind-a' }.version", equalTo("1"))
                .body("multiplex.not_served[0].version", equalTo("2"))
                .body("multiplex.not_served[0].problem", containsString("noop"))
                .body("multiplex.not_served[0].problem", containsString("text-embedding"));
        given().delete("/api/deployments/kinds").then().statusCode(200);
    }

    /** The deployment's {@code multiplex.not_served}, empty when it has none. */
    private static List<Object> notServed(Response deployment) {
        List<Object> notServed = deployment.jsonPath().getList("multiplex.not_served");
        return notServed == null ? List.of() : notServed;
    }

    /** {@code name} at version 1 alone, whatever an earlier run left in the repository. */
    private static void fresh(String name) throws IOException {
        Path folder = TestRepository.PATH.resolve(name);
        if (Files.exists(folder)) {
            deleteFolder(folder);
        }
        TestRepository.encoders(name);
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
