package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The management API and the OIP repository extension, behind a bearer token, with a state directory. */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class ManagementApiTest {

    private static final String NOOP_INPUT =
            "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1,2]}]}";

    static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + ManagementProfile.TOKEN);
    }

    @BeforeEach
    void ready() {
        Serving.awaitModelReady(Serving.MODEL);
    }

    @AfterEach
    void removeTestDeployments() {
        for (String name : new String[] {"echo", "echo2", "tiny-mlp", "mlp-kind", "parked"}) {
            if (admin().get("/api/deployments/" + name).statusCode() == 200) {
                admin().delete("/api/deployments/" + name).then().statusCode(200);
            }
        }
    }

    private static byte[] yaml(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            try {
                Thread.sleep(50); // polling the management API: nothing to wait on but time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @TestHTTPResource("/")
    URL base;

    @Test
    void aManagementBodyThatStopsComingIsEndedWithinTheReadTimeoutAndChangesNothing() throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(30_000); // the profile's read timeout is 2 s; before it was bounded, 60 s held a worker
            OutputStream out = socket.getOutputStream();
            out.write(("PUT /api/deployments/stalled HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    + ManagementProfile.TOKEN + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                    + "{\"model\":").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            while (in.read(buffer) > 0) {
                // whatever the server answers, it must then close: the body will never come
            }
        }
        admin().get("/api/deployments/stalled").then().statusCode(404);
    }

    @Test
    void aDeploymentParkedAtZeroReplicasLeavesTheServerReady() {
        // Asked for no replica (not autoscaled): it is in the state it was asked for, so the server stays in its
        // Service; its requests are refused with the reason, quickly.
        admin().contentType("application/json")
                .body("{\"model\":\"noop\",\"num_replicas\":0,\"min_ready_replicas\":0}")
                .put("/api/deployments/parked").then().statusCode(201);
        await("the parked deployment is published", () -> admin().get("/api/deployments/parked").statusCode() == 200);

        given().get("/v2/health/ready").then().statusCode(200);
        given().get("/q/health/ready").then().statusCode(200);
        given().get("/q/health/started").then().statusCode(200);
        given().get("/v2/models/parked/ready").then().statusCode(503);
        given().contentType("application/json").body("{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\","
                + "\"shape\":[1],\"data\":[1.0]}]}").post("/v2/models/parked/infer").then().statusCode(503)
                .body("error", org.hamcrest.Matchers.containsString("parked"));
        // its state says what it is: parked as asked, not loading
        admin().get("/api/deployments/parked").then().body("state", equalTo("PARKED"));
        admin().get("/api/status").then().body("deployments.find { it.name == 'parked' }.state", equalTo("PARKED"));
        admin().post("/v2/repository/index").then().statusCode(200)
                .body("find { it.name == 'noop' }.state", not(equalTo("LOADING")));
    }

    @Test
    void managementCallsWithoutTheTokenGet401() {
        given().get("/api/deployments").then().statusCode(401)
                .header("WWW-Authenticate", containsString("Bearer"))
                .body("error", containsString("Authorization: Bearer"));
        given().header("Authorization", "Bearer wrong").get("/api/deployments").then().statusCode(401)
                .body("error", containsString("wrong"));
        given().contentType("application/json").body("{\"model\":\"noop\"}").put("/api/deployments/echo")
                .then().statusCode(401);
        given().delete("/api/deployments/" + Serving.MODEL).then().statusCode(401);
        given().post("/v2/repository/index").then().statusCode(401);
        given().post("/v2/repository/models/noop/load").then().statusCode(401);
        given().get("/api/status").then().statusCode(401);
        // inference, health and metrics stay open
        given().contentType("application/json").body("{\"model\":\"" + Serving.MODEL + "\",\"input\":\"hi\"}")
                .post("/v1/embeddings").then().statusCode(200);
        given().get("/q/health/ready").then().statusCode(200);
        admin().get("/api/deployments/" + Serving.MODEL).then().statusCode(200);
    }

    @Test
    void createsChangesInPlaceAndDeletesADeployment() throws IOException {
        admin().contentType("application/json").body("{\"model\":\"noop\",\"predictor_threads\":1}")
                .put("/api/deployments/echo").then().statusCode(201)
                .body("name", equalTo("echo"))
                .body("kind", equalTo("noop"))
                .body("config.model", equalTo("noop"))
                .body("config.max_batch_size", equalTo(32));
        Serving.awaitModelReady("echo");
        given().contentType("application/json").body(NOOP_INPUT).post("/v2/models/echo/infer").then().statusCode(200);

        admin().contentType("application/yaml").body(yaml("num_replicas: 2\nmax_batch_size: 8\n"))
                .patch("/api/deployments/echo").then().statusCode(200)
                .body("config.num_replicas", equalTo(2))
                .body("config.max_batch_size", equalTo(8))
                .body("config.predictor_threads", equalTo(1))
                .body("replicas.desired", equalTo(2)); // the state the change caused, not the one before it
        for (int replicas : new int[] {1, 2, 1, 2}) {
            admin().contentType("application/json").body("{\"num_replicas\":" + replicas + "}")
                    .patch("/api/deployments/echo").then().statusCode(200).body("replicas.desired", equalTo(replicas));
        }
        await("echo runs 2 replicas", () -> admin().get("/api/deployments/echo").jsonPath()
                .getInt("replicas.running") == 2);
        admin().get("/api/deployments").then().statusCode(200).body("deployments.name", hasItem("echo"));
        String state = Files.readString(ManagementProfile.STATE_DIR.resolve("applied-config.yaml"));
        assertTrue(state.contains("name: \"echo\"") || state.contains("name: echo"), state);
        assertTrue(state.contains("num_replicas: 2"), state);

        admin().delete("/api/deployments/echo").then().statusCode(200).body("deleted", equalTo("echo"));
        admin().get("/api/deployments/echo").then().statusCode(404);
        given().contentType("application/json").body(NOOP_INPUT).post("/v2/models/echo/infer").then().statusCode(404);
        assertFalse(Files.readString(ManagementProfile.STATE_DIR.resolve("applied-config.yaml")).contains("echo"));
    }

    @Test
    void aRefusedChangeNamesTheFieldAndChangesNothing() {
        admin().contentType("application/json").body("{\"model\":\"noop\",\"max_batch_size\":0}")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", equalTo("PUT /api/deployments/echo: deployment 'echo': field 'max_batch_size': "
                        + "must be between 1 and 1024, not 0"));
        admin().get("/api/deployments/echo").then().statusCode(404);

        admin().contentType("application/json").body("{\"model\":\"no-such-model\"}")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("field 'model': model 'no-such-model' is not in the repository"));
        admin().contentType("application/json").body("{\"model\":\"../../etc\"}")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("must be a plain name"));
        admin().contentType("application/json").body("{\"model\":\"noop\",\"version\":\"../1\"}")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("version '../1' must be a plain name"));
        admin().contentType("application/json").body("{\"model\":\"noop\",\"num-replicas\":2}")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("did you mean 'num_replicas'?"));
        admin().contentType("application/json").body("{\"model\":\"noop\"")
                .put("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("not valid YAML or JSON"));

        // A whole config with one bad deployment is refused whole: the good one is not created, the others stay.
        admin().contentType("application/yaml").body(yaml("""
                        deployments:
                          - name: all-minilm-l6-v2
                            model: all-minilm-l6-v2
                            num_replicas: 3
                          - name: echo
                            model: noop
                            request_timeout: soon
                        """))
                .put("/api/config").then().statusCode(400)
                .body("error", equalTo("PUT /api/config: deployment 'echo': field 'request_timeout': 'soon' is not a "
                        + "duration such as 2ms, 30s or 1m"));
        admin().get("/api/deployments/echo").then().statusCode(404);
        admin().get("/api/deployments/" + Serving.MODEL).then().body("config.num_replicas", equalTo(1));

        // A deployment keeps its kind.
        admin().contentType("application/json").body("{\"model\":\"all-minilm-l6-v2\"}")
                .put("/api/deployments/echo").then().statusCode(201);
        admin().contentType("application/json").body("{\"model\":\"noop\"}")
                .patch("/api/deployments/echo").then().statusCode(400)
                .body("error", containsString("is a noop model but the deployment serves a text-embedding model"));
    }

    @Test
    void appliesAWholeConfigDeletingWhatItDoesNotList() {
        String both = """
                deployments:
                  - name: all-minilm-l6-v2
                    model: all-minilm-l6-v2
                  - name: echo
                    model: noop
                    predictor_threads: 1
                """;
        admin().contentType("application/yaml").body(yaml(both)).put("/api/config").then().statusCode(200)
                .body("deployments.name", hasItem("echo"));
        Serving.awaitModelReady("echo");
        admin().get("/api/config").then().statusCode(200).body("deployments.name", hasItem("echo"));

        String minilmOnly = "{\"deployments\":[{\"name\":\"all-minilm-l6-v2\",\"model\":\"all-minilm-l6-v2\"}]}";
        admin().contentType("application/json").body(minilmOnly).put("/api/config").then().statusCode(200)
                .body("deployments.name", not(hasItem("echo")));
        admin().get("/api/deployments/echo").then().statusCode(404);
        Serving.awaitModelReady(Serving.MODEL);
    }

    /** A model version served by a deployment of another name is READY in the index, naming that deployment. */
    @Test
    void theRepositoryIndexReportsAModelServedUnderAnotherName() {
        admin().contentType("application/json").body("{\"model\":\"noop\",\"predictor_threads\":1}")
                .put("/api/deployments/index-echo").then().statusCode(201);
        try {
            Serving.awaitModelReady("index-echo");
            admin().post("/v2/repository/index").then().statusCode(200)
                    .body("find { it.name == 'noop' }.state", equalTo("READY"))
                    .body("find { it.name == 'noop' }.reason", equalTo("served by deployment 'index-echo'"));
        } finally {
            admin().delete("/api/deployments/index-echo").then().statusCode(200);
        }
    }

    @Test
    void theRepositoryExtensionListsLoadsAndUnloads() {
        admin().post("/v2/repository/index").then().statusCode(200)
                .body("find { it.name == 'all-minilm-l6-v2' && it.version == '1' }.state", equalTo("READY"))
                .body("find { it.name == 'noop' }.state", equalTo("UNAVAILABLE"))
                .body("find { it.name == 'tiny-mlp' && it.version == '2' }.state", equalTo("UNAVAILABLE"));

        admin().post("/v2/repository/models/tiny-mlp/load").then().statusCode(200)
                .body("name", equalTo("tiny-mlp"))
                .body("config.version", equalTo("2"));
        Serving.awaitModelReady("tiny-mlp");
        admin().post("/v2/repository/index").then()
                .body("find { it.name == 'tiny-mlp' && it.version == '2' }.state", equalTo("READY"))
                .body("find { it.name == 'tiny-mlp' && it.version == '1' }.state", equalTo("UNAVAILABLE"));

        admin().post("/v2/repository/models/tiny-mlp/unload").then().statusCode(200);
        admin().get("/api/deployments/tiny-mlp").then().statusCode(404);

        admin().post("/v2/repository/models/no-such-model/load").then().statusCode(404);
        admin().post("/v2/repository/models/..hidden/load").then().statusCode(400)
                .body("error", containsString("plain name"));
        admin().urlEncodingEnabled(false).post("/v2/repository/models/..%2F..%2Fetc/load").then().statusCode(400)
                .body("error", containsString("model name '../../etc' must be a plain name"));
        admin().contentType("application/json").body("{\"parameters\":{\"version\":\"7\"}}")
                .post("/v2/repository/models/tiny-mlp/load").then().statusCode(400)
                .body("error", containsString("model 'tiny-mlp' has no version '7'"));
    }
}
