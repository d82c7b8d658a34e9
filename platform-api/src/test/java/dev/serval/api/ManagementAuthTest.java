package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * No spelling of a management path gets past the token: each of these reaches a management method (or nothing) and
 * must never be answered 2xx without the token. Sent byte for byte, as an attacker would, since HTTP clients
 * normalise such paths before sending them.
 */
@QuarkusTest
@TestProfile(ManagementProfile.class)
class ManagementAuthTest {

    @TestHTTPResource("/")
    URL base;

    @ParameterizedTest
    @ValueSource(strings = {
        "GET /api/deployments",
        "GET //api/deployments",
        "GET /%61pi/deployments",
        "GET /%61%70%69/deployments",
        "GET /api/%64eployments",
        "GET /v2/../api/deployments",
        "GET /v2/%2e%2e/api/deployments",
        "GET /v2/%2E%2E/api/deployments",
        "GET /./api/deployments",
        "GET /%2e/api/deployments",
        "GET /api//deployments",
        "GET /api/deployments/",
        "GET /api/./deployments",
        "GET /API/deployments",
        "GET /Api/Deployments",
        "GET /api/deployments;x=1",
        "GET /api/deployments%2f",
        "GET /api%2fdeployments",
        "GET ///api///deployments",
        "GET /v2/models/../../api/deployments",
        "GET /api/status",
        "GET //api/status",
        "GET /%61pi/status",
        "POST /v2/repository/index",
        "POST //v2/repository/index",
        "POST /v2//repository/index",
        "POST /v2/%72epository/index",
        "POST /v2/models/../repository/index",
        "DELETE //api/deployments/all-minilm-l6-v2",
        "DELETE /%61pi/deployments/all-minilm-l6-v2",
        "POST /v2/../v2/repository/models/noop/unload",
        "GET /tei/../api/deployments",
        "GET /tei/%2e%2e/api/deployments",
        "GET /tei/all-minilm-l6-v2/../../api/deployments",
        "GET /tei/..%2fapi/deployments",
        "POST /tei/..%2fapi/status",
    })
    void aManagementPathInAnySpellingNeedsTheToken(String call) throws Exception {
        RawHttp.Answer answer = RawHttp.send(base, call + " HTTP/1.1", new byte[0]);
        assertTrue(answer.status() == 401 || answer.status() == 404 || answer.status() == 400
                || answer.status() == 405, call + " -> " + answer.text());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/api/deployments/evil", "//api/deployments/evil", "/%61pi/deployments/evil",
        "/v2/../api/deployments/evil", "/v2/%2e%2e/api/deployments/evil"})
    void noSpellingOfAPutCreatesADeploymentWithoutTheToken(String path) throws Exception {
        byte[] body = "{\"model\":\"noop\"}".getBytes(StandardCharsets.UTF_8);
        RawHttp.Answer answer = RawHttp.send(base, "PUT " + path + " HTTP/1.1\r\nContent-Type: application/json"
                + "\r\nContent-Length: " + body.length, body);
        assertTrue(answer.status() == 401 || answer.status() == 404 || answer.status() == 400, answer.text());
        ManagementApiTest.admin().get("/api/deployments/evil").then().statusCode(404);
    }

    @ParameterizedTest
    @ValueSource(strings = {"//api/deployments", "/%61pi/deployments", "/v2/../api/deployments"})
    void theSameSpellingsWithTheTokenReachTheSameResource(String path) throws Exception {
        RawHttp.Answer answer = RawHttp.send(base, "GET " + path + " HTTP/1.1\r\nAuthorization: Bearer "
                + ManagementProfile.TOKEN, new byte[0]);
        // Whatever the router makes of the spelling, it either reaches the resource with the token or nothing.
        assertTrue(answer.status() == 200 || answer.status() == 404 || answer.status() == 400, answer.text());
    }

    @org.junit.jupiter.api.Test
    void inferenceHealthAndMetricsStayOpen() {
        given().get("/v2/health/live").then().statusCode(200);
        given().get("/q/health/live").then().statusCode(200);
        given().get("/q/metrics").then().statusCode(200);
        assertEquals(200, given().get("/v2/models/" + Serving.MODEL).statusCode());
    }
}
