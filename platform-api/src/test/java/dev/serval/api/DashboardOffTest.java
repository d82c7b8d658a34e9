package dev.serval.api;

import static io.restassured.RestAssured.given;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

/** {@code serval.ui.enabled=false} (in GrpcPortProfile): no dashboard, no data. */
@QuarkusTest
@TestProfile(GrpcPortProfile.class)
class DashboardOffTest {

    @Test
    void thereIsNoDashboard() {
        given().redirects().follow(false).get("/ui").then().statusCode(404);
        given().get("/ui/").then().statusCode(404);
        given().get("/ui/dashboard.js").then().statusCode(404);
        given().get("/ui/api/dashboard").then().statusCode(404);
    }
}
