package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The dashboard with {@code serval.ui.require-token=true} (ManagementProfile), and deployments that come and go. */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class DashboardTokenTest {

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @Test
    void theDataNeedsTheTokenWhenConfiguredSoButThePageDoesNot() {
        given().get("/ui/api/dashboard").then().statusCode(401)
                .header("WWW-Authenticate", containsString("Bearer"))
                .body("error", containsString("management token"));
        given().header("Authorization", "Bearer wrong").get("/ui/api/dashboard").then().statusCode(401);
        ManagementApiTest.admin().get("/ui/api/dashboard").then().statusCode(200);
        given().get("/ui/").then().statusCode(200);
    }

    /** Every spelling of the data's path either reaches it, and needs the token, or reaches nothing. */
    @Test
    void noSpellingOfThePathWalksAroundTheToken() {
        for (String path : new String[] {"//ui/api/dashboard", "/ui//api/dashboard", "/%75i/api/dashboard",
            "/ui/api/%64ashboard", "/ui/./api/dashboard", "/ui/x/../api/dashboard", "/v2/../ui/api/dashboard",
            "/ui/api/dashboard/", "/ui/api/dashboard?after=0", "/ui/%2e%2e/ui/api/dashboard",
            "/UI/api/dashboard", "/ui/api/dashboard;x=1"}) {
            int status = given().urlEncodingEnabled(false).get(path).statusCode();
            assertTrue(status == 401 || status == 404 || status == 400, path + " answered " + status
                    + " without the token");
        }
    }

    @Test
    void deploymentsThatComeAndGoAreShownAndARecreatedOneStartsANewHistory() {
        String name = "dash-echo";
        ManagementApiTest.admin().contentType("application/json").body("{\"model\":\"noop\"}")
                .put("/api/deployments/" + name).then().statusCode(201);
        Serving.awaitModelReady(name);
        long first = historyId(name);
        ManagementApiTest.admin().delete("/api/deployments/" + name).then().statusCode(200);
        Serving.await("the deleted deployment leaving the dashboard", () -> ManagementApiTest.admin()
                .get("/ui/api/dashboard"), response -> DashboardTest.deployment(DashboardTest.json(response), name)
                == null);
        ManagementApiTest.admin().contentType("application/json").body("{\"model\":\"noop\"}")
                .put("/api/deployments/" + name).then().statusCode(201);
        Serving.awaitModelReady(name);
        assertNotEquals(first, historyId(name));
        ManagementApiTest.admin().delete("/api/deployments/" + name).then().statusCode(200);
        assertNull(DashboardTest.deployment(DashboardTest.json(ManagementApiTest.admin().get("/api/status")), name));
    }

    /** The history id of deployment {@code name}, once it has been sampled. */
    private static long historyId(String name) {
        JsonNode feed = DashboardTest.json(Serving.await("a sample of " + name,
                () -> ManagementApiTest.admin().get("/ui/api/dashboard"), response -> {
                    JsonNode deployment = DashboardTest.deployment(DashboardTest.json(response), name);
                    return deployment != null && deployment.has("history");
                }));
        return DashboardTest.deployment(feed, name).at("/history/id").asLong();
    }
}
