package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pipelines and custom handlers over HTTP: deployed from the config file and the management API, answering through
 * OIP with their steps' answers, passing the request id and deadline along, and failing like models do (a throwing
 * handler is a 500 for its request, a hanging one a 504), with the load-time checks as the client sees them.
 */
@QuarkusTest
@TestProfile(CompositionProfile.class)
class CompositionHttpTest {

    private static final String INPUT = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
            + "\"data\":[0.5,-1.0,2.0,0.25]}]}";

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + ManagementProfile.TOKEN);
    }

    private static Response infer(String model) {
        return given().contentType("application/json").body(INPUT).post("/v2/models/" + model + "/infer");
    }

    private static float[] floats(Response response, String output) {
        return Serving.floats(response.jsonPath().<Number>getList("outputs.find { it.name == '" + output + "' }.data"));
    }

    private static void deploy(String name) {
        admin().contentType("application/json").body("{\"model\":\"" + name + "\"}").put("/api/deployments/" + name)
                .then().statusCode(201);
    }

    @Test
    void aPipelineFromTheConfigFileAnswersAsItsStepsDoAndShowsTheirMetadata() {
        float[] direct = floats(infer("mlp").then().statusCode(200).extract().response(), "output");

        Response piped = infer("chain").then().statusCode(200)
                .body("model_name", equalTo("chain"))
                .body("outputs[0].name", equalTo("output"))
                .body("outputs[0].shape", equalTo(List.of(1, 2)))
                .extract().response();

        assertEquals(List.of(direct[0], direct[1]), List.of(floats(piped, "output")[0], floats(piped, "output")[1]));
        given().get("/v2/models/chain").then().statusCode(200)
                .body("platform", equalTo("serval_pipeline"))
                .body("outputs[0].name", equalTo("output"))
                .body("outputs[0].datatype", equalTo("FP32"));
        admin().get("/api/deployments/chain").then().statusCode(200).body("kind", equalTo("pipeline"));
        // Not an embedding model: the OpenAI API refuses it by name.
        given().contentType("application/json").body("{\"model\":\"chain\",\"input\":\"hi\"}").post("/v1/embeddings")
                .then().statusCode(400);
    }

    @Test
    void threeStepsWithAHandlerCarryTheRequestIdAndAreMeteredPerStep() {
        float[] direct = floats(infer("mlp").then().statusCode(200).extract().response(), "output");

        Response answer = given().contentType("application/json").header("x-request-id", "trace-42").body(INPUT)
                .post("/v2/models/chain3/infer").then().statusCode(200).extract().response();

        float[] scaled = floats(answer, "scaled");
        assertEquals(2 * direct[0], scaled[0], 1e-6);
        assertEquals(2 * direct[1], scaled[1], 1e-6);
        assertEquals(List.of("trace-42"),
                answer.jsonPath().getList("outputs.find { it.name == 'request_id' }.data"));
        given().get("/v2/models/chain3").then().statusCode(200)
                .body("outputs.name", equalTo(List.of("scaled", "request_id")));
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        for (String step : List.of("echo", "mlp", "scale")) {
            assertTrue(metrics.contains("serval_call_seconds_count{callee=\"" + step + "\",deployment=\"chain3\","
                    + "outcome=\"answered\"}"), "a timer for step " + step);
        }
    }

    @Test
    void aRoutedStepCallsTheDeploymentThePreviousStepsLabelNames() {
        deploy("sign");
        Serving.awaitModelReady("sign");
        deploy("routed");
        Serving.awaitModelReady("routed");

        infer("routed").then().statusCode(200).body("outputs[0].name", equalTo("output")); // sum 1.75: mlp
        given().contentType("application/json").body(INPUT.replace("0.5,-1.0,2.0,0.25", "-0.5,-1.0,-2.0,0.25"))
                .post("/v2/models/routed/infer").then().statusCode(200)
                .body("outputs[0].name", equalTo("input")) // the default, echo, given the request's tensors
                .body("outputs[0].data", equalTo(List.of(-0.5f, -1.0f, -2.0f, 0.25f)));
    }

    @Test
    void aHandlerDeployedWithTheTokenCallsAnotherDeploymentAndSeesOnlyTheSpi() {
        given().contentType("application/json").body("{\"model\":\"caller\"}").put("/api/deployments/caller")
                .then().statusCode(401);
        deploy("caller");
        Serving.awaitModelReady("caller");
        float[] direct = floats(infer("mlp").then().statusCode(200).extract().response(), "output");

        Response answer = infer("caller").then().statusCode(200).extract().response();

        assertEquals(direct[0], floats(answer, "output")[0], 1e-6);
        assertEquals(List.of(false), answer.jsonPath().getList("outputs.find { it.name == 'sees_server' }.data"),
                "the handler's class loader sees the JDK and the SPI only");
    }

    @Test
    void aThrowingHandlerFailsItsRequestOnlyAndBadInputIsA400() {
        deploy("broken");
        deploy("picky");
        Serving.awaitModelReady("broken");
        Serving.awaitModelReady("picky");

        infer("broken").then().statusCode(500).body("error", containsString("boom: the handler failed"));
        for (int i = 0; i < 4; i++) { // past health_check_failure_threshold (3) in a row
            infer("broken").then().statusCode(500);
        }
        assertTrue(given().get("/q/metrics").asString().lines().anyMatch(line -> line.equals(
                "serval_replica_failures_total{deployment=\"broken\",kind=\"unhealthy\"} 0.0")),
                "a client's input cannot make the handler's replica restart");
        infer("picky").then().statusCode(400).body("error", containsString("input tensor 'x' is missing"));
        infer("mlp").then().statusCode(200);
        given().get("/v2/health/live").then().statusCode(200);
    }

    @Test
    void aHangingHandlerIsA504AtTheDeadlineAndTheOthersServe() {
        deploy("hangs");
        Serving.awaitModelReady("hangs");

        given().contentType("application/json").header("x-request-timeout-ms", "300").body(INPUT)
                .post("/v2/models/hangs/infer").then().statusCode(504);

        infer("chain").then().statusCode(200);
    }

    @Test
    void theDeadlineOfAPipelineRequestEndsTheStepItWaitsFor() {
        deploy("patient");
        Serving.awaitModelReady("patient");
        deploy("waits");
        Serving.awaitModelReady("waits");

        given().contentType("application/json").header("x-request-timeout-ms", "300").body(INPUT)
                .post("/v2/models/waits/infer").then().statusCode(504);

        // The patient handler returns only once its request is abandoned: its replica is free again only if the
        // pipeline's end reached the step.
        Serving.await("the step's request to end", () -> given().get("/q/metrics"),
                r -> r.asString().lines().anyMatch(line -> line.startsWith("serval_replica_in_flight{deployment=\"patient\"")
                        && line.endsWith(" 0.0")));
    }

    @Test
    void pipelinesAndHandlersThatCannotWorkAreRefusedWithTheReason() {
        admin().contentType("application/json").body("{\"model\":\"lost\"}").put("/api/deployments/lost")
                .then().statusCode(400)
                .body("error", containsString("step 1 calls deployment 'nope', which is not deployed"));

        // Two pipelines that would call each other: loop-a version 2 calls loop-b, which calls loop-a.
        admin().contentType("application/json").body("{\"model\":\"loop-a\",\"version\":\"1\"}")
                .put("/api/deployments/loop-a").then().statusCode(201);
        admin().contentType("application/json").body("{\"model\":\"loop-b\"}").put("/api/deployments/loop-b")
                .then().statusCode(201);
        admin().contentType("application/json").body("{\"model\":\"loop-a\",\"version\":\"2\"}")
                .put("/api/deployments/loop-a").then().statusCode(400)
                .body("error", containsString("pipelines call each other in a loop: loop-a -> loop-b -> loop-a"));
        // A step is not deleted from under its pipeline (which would fail every request, stop every later change of
        // any deployment, and not load after a restart): 409 naming the pipeline; nothing changed.
        admin().delete("/api/deployments/loop-a").then().statusCode(409)
                .body("error", containsString("deployment 'loop-a' is a step of pipeline(s) loop-b"));
        admin().get("/api/deployments/loop-a").then().statusCode(200);
        admin().contentType("application/json").body("{\"num_replicas\":1}").patch("/api/deployments/loop-b")
                .then().statusCode(200);
        admin().delete("/api/deployments/loop-b").then().statusCode(200);
        admin().delete("/api/deployments/loop-a").then().statusCode(200);

        // A step that names a multiplexed deployment would never load: refused when the pipeline is deployed.
        admin().contentType("application/json").body("{\"model\":\"tiny-m*\",\"predictor_threads\":1}")
                .put("/api/deployments/mux").then().statusCode(201);
        try {
            // serval.multiplex.private: which models it serves, and the dashboard's data, need the token.
            given().get("/v2/models/mux").then().statusCode(401)
                    .body("error", containsString("serval.multiplex.private"));
            admin().get("/v2/models/mux").then().statusCode(200).body("models", equalTo(List.of("tiny-mlp")));
            given().get("/ui/api/dashboard").then().statusCode(401);
            admin().get("/ui/api/dashboard").then().statusCode(200);
            admin().contentType("application/json").body("{\"model\":\"viamux\"}").put("/api/deployments/viamux")
                    .then().statusCode(400)
                    .body("error", containsString("step 1 calls deployment 'mux', which is multiplexed"));
        } finally {
            admin().delete("/api/deployments/mux").then().statusCode(200);
        }

        // A failed deployment makes the server unready: each is deleted once seen.
        deploy("mismatch");
        try {
            awaitFailed("mismatch").then().body("last_error", containsString("step 2 ('mlp') takes 'input', which "
                    + "step 1 ('mlp') does not return (it returns 'output')"));
        } finally {
            admin().delete("/api/deployments/mismatch").then().statusCode(200);
        }
        deploy("plain");
        try {
            awaitFailed("plain").then().body("last_error",
                    containsString("test.Plain does not implement dev.serval.spi.Handler"));
        } finally {
            admin().delete("/api/deployments/plain").then().statusCode(200);
        }
    }

    private static Response awaitFailed(String name) {
        return Serving.await(name + " to fail", () -> admin().get("/api/deployments/" + name),
                r -> "FAILED".equals(r.jsonPath().getString("state")));
    }
}
