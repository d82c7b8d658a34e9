package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Autoscaling over HTTP: a deployment declared with {@code serval.deployments.echo.autoscaling.*} properties goes to
 * zero replicas when idle (its own readiness 503, the server's 200, its metadata kept), and the next request starts
 * a replica and is answered (a cold start); the management API takes, shows and refuses autoscaling settings.
 */
@QuarkusTest
@TestProfile(AutoscalingProfile.class)
class AutoscalingHttpTest {

    private static final String ECHO_BODY = "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,2],"
            + "\"data\":[1.5,2]}]}";

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @Test
    void anIdleDeploymentGoesToZeroAndAColdStartServesTheNextRequest() {
        Serving.awaitDeploymentState("echo", "IDLE");
        given().get("/api/deployments/echo").then().statusCode(200)
                .body("replicas.desired", equalTo(0))
                .body("replicas.running", equalTo(0))
                .body("autoscaling.last_decision.to", equalTo(0))
                .body("autoscaling.last_decision.reason", containsString("downscale_to_zero_delay"))
                .body("config.autoscaling.min_replicas", equalTo(0))
                .body("config", not(hasKey("num_replicas")));
        given().get("/v2/models/echo/ready").then().statusCode(503).body("ready", equalTo(false));
        given().get("/q/health/ready").then().statusCode(200);
        given().get("/v2/models/echo").then().statusCode(200).body("inputs", equalTo(List.of()));

        given().contentType("application/json").body(ECHO_BODY).post("/v2/models/echo/infer").then()
                .statusCode(200).body("outputs[0].data", equalTo(List.of(1.5f, 2f)));

        given().get("/api/deployments/echo").then().statusCode(200)
                .body("replicas.desired", greaterThanOrEqualTo(1))
                .body("autoscaling.last_decision.reason", containsString("arrived while scaled to zero"));
        given().get("/q/metrics").then().statusCode(200)
                .body(containsString("serval_autoscaling_decisions_total{deployment=\"echo\",direction=\"down\"}"))
                .body(containsString("serval_autoscaling_desired_replicas{deployment=\"echo\"}"))
                .body(containsString("serval_ongoing_requests{deployment=\"echo\"}"));
    }

    @Test
    void theManagementApiTakesShowsAndRefusesAutoscalingSettings() {
        given().contentType("application/json")
                .body("{\"model\":\"noop\",\"predictor_threads\":1,\"autoscaling\":{\"min_replicas\":1,"
                        + "\"max_replicas\":3,\"target_ongoing_requests\":4}}")
                .put("/api/deployments/scaled").then().statusCode(201)
                .body("config.autoscaling.max_replicas", equalTo(3))
                .body("config.autoscaling.target_ongoing_requests", equalTo(4.0f))
                .body("config", not(hasKey("num_replicas")));
        Serving.awaitDeploymentState("scaled", "READY");
        given().get("/api/deployments/scaled").then().statusCode(200)
                .body("replicas.desired", equalTo(1))
                .body("autoscaling.wanted_replicas", equalTo(1))
                .body("autoscaling.reason", containsString("target 4 per replica"))
                .body("autoscaling.last_decision", nullValue());

        given().contentType("application/json").body("{\"num_replicas\":2,\"autoscaling\":{\"max_replicas\":3}}")
                .patch("/api/deployments/scaled").then().statusCode(400)
                .body("error", containsString("autoscaling and num_replicas are both given"));
        given().contentType("application/json").body("{\"autoscaling\":{\"max_replicas\":0}}")
                .patch("/api/deployments/scaled").then().statusCode(400)
                .body("error", containsString("autoscaling.max_replicas"));

        given().contentType("application/json").body("{\"num_replicas\":2}").patch("/api/deployments/scaled").then()
                .statusCode(200).body("config.num_replicas", equalTo(2)).body("config", not(hasKey("autoscaling")));
        given().delete("/api/deployments/scaled").then().statusCode(200);
    }

    @Test
    void aDeploymentCreatedAtZeroAnswersItsFirstInferenceOnceItLoaded() {
        given().contentType("application/json")
                .body("{\"model\":\"noop\",\"predictor_threads\":1,\"autoscaling\":{\"min_replicas\":0,"
                        + "\"max_replicas\":1,\"initial_replicas\":0}}")
                .put("/api/deployments/cold").then().statusCode(201).body("replicas.desired", equalTo(0));
        // Asked for no replica, it has nothing to load: the startup probe passes (it would otherwise fail for ever,
        // and Kubernetes would restart the pod in a loop).
        given().get("/q/health/started").then().statusCode(200);
        given().contentType("application/json").body(ECHO_BODY).post("/v2/models/cold/infer").then()
                .statusCode(200).body("outputs[0].data", equalTo(List.of(1.5f, 2f)));
        given().delete("/api/deployments/cold").then().statusCode(200);
    }
}
