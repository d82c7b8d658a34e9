package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.hasSize;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class StatusResourceTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @Test
    void listsDeploymentsWithVersionsReplicasQueueAndErrors() {
        given().get("/api/status").then().statusCode(200)
                .body("live", equalTo(true))
                .body("ready", equalTo(true))
                .body("deployments", hasSize(1))
                .body("deployments[0].name", equalTo(Serving.MODEL))
                .body("deployments[0].model", equalTo("all-minilm-l6-v2"))
                .body("deployments[0].kind", equalTo("text-embedding"))
                .body("deployments[0].version", equalTo("1"))
                .body("deployments[0].state", equalTo("READY"))
                .body("deployments[0].replicas.desired", equalTo(1))
                .body("deployments[0].replicas.running", equalTo(1))
                .body("deployments[0].replicas.starting", equalTo(0))
                .body("deployments[0].queued_requests", equalTo(0))
                .body("deployments[0].in_flight_requests", greaterThanOrEqualTo(0))
                .body("deployments[0].recent_errors", hasSize(0));
    }

    @Test
    void startupProbeIsUpOnceEveryDeploymentHasServed() {
        given().get("/q/health/started").then().statusCode(200).body("status", equalTo("UP"));
    }
}
