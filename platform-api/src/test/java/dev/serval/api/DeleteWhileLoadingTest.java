package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Deleting a deployment whose model is still loading (its load outlasts the drain timeout), then creating it again
 * under the same name, through the management API.
 */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class DeleteWhileLoadingTest {

    private static final String NAME = "reborn";

    @AfterEach
    void removeTheDeployment() {
        if (ManagementApiTest.admin().get("/api/deployments/" + NAME).statusCode() == 200) {
            ManagementApiTest.admin().delete("/api/deployments/" + NAME).then().statusCode(200);
        }
    }

    @Test
    void aDeploymentDeletedWhileItsModelLoadsIsCreatedAgainAndServesAndTheLateModelIsClosed() {
        GatedModelSource.LOAD_GATE.drainPermits();
        int loadsBefore = GatedModelSource.GATED_LOADS.get();
        int closedBefore = GatedModelSource.GATED_LOADS_CLOSED.get();
        ManagementApiTest.admin().contentType("application/json")
                .body("{\"model\":\"gated-load:\",\"predictor_threads\":1,\"graceful_shutdown_timeout\":\"0s\"}")
                .put("/api/deployments/" + NAME).then().statusCode(201);
        ManagementApiTest.await("the model load began", () -> GatedModelSource.GATED_LOADS.get() > loadsBefore);

        long start = System.nanoTime();
        ManagementApiTest.admin().delete("/api/deployments/" + NAME).then().statusCode(200);
        long deleteMillis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(deleteMillis < 10_000, "the delete waited " + deleteMillis + " ms for a load it does not need");

        ManagementApiTest.admin().contentType("application/json").body("{\"model\":\"gated:\",\"predictor_threads\":1}")
                .put("/api/deployments/" + NAME).then().statusCode(201);
        Serving.awaitModelReady(NAME);
        given().contentType("application/json").body("{\"model\":\"" + NAME + "\",\"input\":\"hello\"}")
                .post("/v1/embeddings").then().statusCode(200).body("data[0].embedding[0]", equalTo(1.0f));

        GatedModelSource.LOAD_GATE.release(); // the old load finishes after its deployment is gone
        ManagementApiTest.await("the late model was closed",
                () -> GatedModelSource.GATED_LOADS_CLOSED.get() > closedBefore);
        assertEquals(0, GatedModelSource.LOAD_GATE.availablePermits(), "the late load took its permit");
        ManagementApiTest.admin().get("/v2/models/" + NAME + "/ready").then().statusCode(200);
    }
}
