package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.ValidatableResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A rolling update between two versions that take different inputs ({@code gated-versioned:}): until a replica of
 * version 2 serves, version 1 judges every request; a version 2 that loaded but is still warming up judges none.
 */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class RollingUpdateValidationHttpTest {

    private static final String NAME = "versioned";

    @AfterEach
    void cleanUp() {
        GatedModelSource.V2_PROBE_GATE.release(1000); // health checks of version 2 probe again
        ManagementApiTest.admin().delete("/api/deployments/" + NAME);
        GatedModelSource.V2_PROBE_GATE.drainPermits();
    }

    private static ValidatableResponse infer(String text) {
        return given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"" + text
                        + "\"]}]}")
                .post("/v2/models/" + NAME + "/infer").then();
    }

    @Test
    void requestsAreJudgedByTheVersionThatServesThemNotByOneStillWarmingUp() {
        GatedModelSource.V2_PROBE_GATE.drainPermits();
        ManagementApiTest.admin().contentType("application/json")
                .body("{\"model\":\"gated-versioned:\",\"version\":\"1\",\"predictor_threads\":1}")
                .put("/api/deployments/" + NAME).then().statusCode(201);
        Serving.awaitModelReady(NAME);

        ManagementApiTest.admin().contentType("application/json").body("{\"version\":\"2\"}")
                .patch("/api/deployments/" + NAME).then().statusCode(200);
        ManagementApiTest.await("version 2 loaded and is warming up",
                () -> GatedModelSource.V2_PROBES_WAITING.get() >= 1);

        infer("v1-only text").statusCode(200).body("model_version", equalTo("1"))
                .body("outputs[0].data[0]", equalTo(1.0f));
        infer("v2-only text").statusCode(400).body("error", containsString("another version than 1"));

        GatedModelSource.V2_PROBE_GATE.release(1);
        ManagementApiTest.await("version 2 replaced version 1", () -> {
            Map<String, Object> view = ManagementApiTest.admin().get("/api/deployments/" + NAME).jsonPath().getMap("");
            @SuppressWarnings("unchecked")
            Map<String, Integer> replicas = (Map<String, Integer>) view.get("replicas");
            return replicas.get("running") == 1 && replicas.get("updating") == 0 && replicas.get("stopping") == 0;
        });

        infer("v2-only text").statusCode(200).body("model_version", equalTo("2"))
                .body("outputs[0].data[0]", equalTo(2.0f));
        infer("v1-only text").statusCode(400).body("error", containsString("another version than 2"));
    }
}
