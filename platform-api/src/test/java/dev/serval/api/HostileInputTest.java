package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Requests written as an attacker would: small bodies that declare huge shapes or counts, many tiny inputs, lying
 * binary lengths, deep nesting. Each is a 4xx naming the problem, answered at once, and the server keeps serving.
 */
@QuarkusTest
class HostileInputTest {

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @AfterEach
    void stillServes() {
        given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"fine\"]}]}")
                .post(INFER).then().statusCode(200);
    }

    private static Response infer(String body) {
        return given().contentType("application/json").body(body).post(INFER);
    }

    @Test
    void aNinetyByteRequestDeclaringTwoBillionElementsIsA400NotAnOutOfMemoryError() {
        String attack = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2147483639],\"data\":[]}]}";
        infer(attack).then().statusCode(400).body("error", containsString("max-tensor-elements"));
    }

    @Test
    void aDeclaredShapeWithinTheLimitIsCheckedAgainstTheDataActuallySent() {
        infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[16000000],\"data\":[\"a\"]}]}")
                .then().statusCode(400).body("error", containsString("has shape of 16000000 elements but 1 data elements"));
        infer("{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[4000,4000],\"data\":[1,2]}]}")
                .then().statusCode(400).body("error", containsString("but 2 data elements"));
    }

    @Test
    void manyTinyInputsAreRefusedByCountBeforeAnyIsDecoded() {
        StringBuilder body = new StringBuilder("{\"inputs\":[");
        for (int i = 0; i < 100_000; i++) { // ~5 MB: within the body limit
            body.append(i == 0 ? "" : ",").append("{\"name\":\"t").append(i)
                    .append("\",\"datatype\":\"BOOL\",\"shape\":[0],\"data\":[]}");
        }
        body.append("]}");
        infer(body.toString()).then().statusCode(400).body("error",
                containsString("the request has 100000 inputs; at most 64 are allowed (serval.http.max-tensors-per-request)"));
    }

    @Test
    void manyRequestedOutputsAreRefusedByCount() {
        StringBuilder outputs = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            outputs.append(i == 0 ? "" : ",").append("{\"name\":\"o").append(i).append("\"}");
        }
        infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"a\"]}],\"outputs\":["
                + outputs + "]}").then().statusCode(400).body("error", containsString("1000 outputs asked for"));
    }

    @Test
    void aShapeOfManyDimensionsIsRefused() {
        StringBuilder shape = new StringBuilder("[");
        for (int i = 0; i < 100; i++) {
            shape.append(i == 0 ? "1" : ",1");
        }
        infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":" + shape
                + "],\"data\":[\"a\"]}]}").then().statusCode(400).body("error", containsString("100 dimensions"));
    }

    @Test
    void deeplyNestedDataIsA400() {
        String open = "[".repeat(5000);
        String close = "]".repeat(5000);
        infer("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":" + open + "\"a\"" + close
                + "}]}").then().statusCode(400);
    }

    @Test
    void binaryLengthsThatLieAreA400() throws Exception {
        String header = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[2147483639],"
                + "\"parameters\":{\"binary_data_size\":8}}]}";
        byte[] json = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(json.length + 8).order(ByteOrder.LITTLE_ENDIAN);
        body.put(json).putInt(Integer.MAX_VALUE).putInt(0);
        Response refused = given().contentType("application/octet-stream")
                .header("Inference-Header-Content-Length", json.length).body(body.array()).post(INFER);
        refused.then().statusCode(400).body("error", containsString("max-tensor-elements"));

        String small = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],"
                + "\"parameters\":{\"binary_data_size\":8}}]}";
        byte[] smallJson = small.getBytes(StandardCharsets.UTF_8);
        ByteBuffer lying = ByteBuffer.allocate(smallJson.length + 8).order(ByteOrder.LITTLE_ENDIAN);
        lying.put(smallJson).putInt(Integer.MAX_VALUE).putInt(0);
        given().contentType("application/octet-stream").header("Inference-Header-Content-Length", smallJson.length)
                .body(lying.array()).post(INFER).then().statusCode(400).body("error", containsString("declares"));
    }

    @Test
    void tooManyOpenAiTextsAreA400() {
        StringBuilder texts = new StringBuilder();
        for (int i = 0; i < 3000; i++) {
            texts.append(i == 0 ? "" : ",").append("\"a\"");
        }
        given().contentType("application/json").body("{\"model\":\"" + Serving.MODEL + "\",\"input\":[" + texts + "]}")
                .post("/v1/embeddings").then().statusCode(400)
                .body("error.message", containsString("holds 3000 texts; at most 2048 are allowed per request (serval.http.max-texts-per-request)"));
    }

    @Test
    void aDeclaredOversizedBodyIsRefusedWithoutReadingItAndTheConnectionClosed() throws Exception {
        // Headers only: the 9 MB the request declares never come, and the answer must not wait for them.
        RawHttp.Answer answer = RawHttp.send(base, "POST " + INFER + " HTTP/1.1\r\nContent-Type: application/json"
                + "\r\nContent-Length: " + (9 << 20), new byte[0]);
        assertEquals(413, answer.status(), answer.text());
        assertTrue(answer.text().contains("exceeds the limit"), answer.text());
    }
}
