package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.matchesPattern;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

@QuarkusTest
class RequestIdTest {

    @Test
    void everyResponseCarriesARequestId() {
        String first = given().get("/v2/health/live").then().header("x-request-id", matchesPattern("[0-9a-f]{32}"))
                .extract().header("x-request-id");
        String second = given().get("/v2/health/live").header("x-request-id");
        assertNotEquals(first, second);
        given().get("/no/such/path").then().statusCode(404).header("x-request-id", matchesPattern("[0-9a-f]{32}"));
    }

    @Test
    void aClientsRequestIdIsEchoed() {
        given().header("x-request-id", "client-42:retry.1").get("/v2").then().header("x-request-id", equalTo("client-42:retry.1"));
        given().header("x-request-id", "trace-7").contentType("application/json").body("{\"inputs\": [")
                .post(Serving.INFER).then().statusCode(400).header("x-request-id", equalTo("trace-7"));
    }

    @Test
    void anUnsafeRequestIdIsReplacedNotReflected() {
        given().header("x-request-id", "<script>alert(1)</script>").get("/v2").then()
                .header("x-request-id", matchesPattern("[0-9a-f]{32}"));
        given().header("x-request-id", "x".repeat(200)).get("/v2").then()
                .header("x-request-id", matchesPattern("[0-9a-f]{32}"));
    }
}
