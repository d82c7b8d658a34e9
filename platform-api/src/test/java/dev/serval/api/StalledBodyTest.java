package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A client that sends part of a body and stalls must not hold its bytes in the server's budget for as long as it
 * likes (before: until the connection's 30-minute idle timeout, so that enough stalled uploads refused everyone
 * else): past {@code serval.http.body-timeout} (5 s in this profile) the request gets 408, its connection is closed
 * and its bytes go back.
 */
@QuarkusTest
@TestProfile(GrpcPortProfile.class)
class StalledBodyTest {

    @TestHTTPResource("/")
    URL base;

    private static double bufferedBytes() {
        String metrics = given().get("/q/metrics").asString();
        return metrics.lines().filter(line -> line.startsWith("serval_http_buffered_bytes "))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.indexOf(' ') + 1))).findFirst()
                .orElseThrow();
    }

    /** Sends headers declaring 40,000 bytes and 20,000 of them; returns once the server holds those in its budget. */
    private static void sendHalfABody(Socket socket, double before) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v2/models/" + Serving.MODEL + "/infer HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nContent-Length: 40000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[20_000]);
        out.flush();
        Serving.await("the partial body held in the budget", () -> given().get("/q/metrics"),
                response -> bufferedBytes() >= before + 20_000);
    }

    private static void assertServes() {
        assertEquals(200, given().contentType("application/json")
                .body("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"hi\"]}]}")
                .post("/v2/models/" + Serving.MODEL + "/infer").statusCode(), "the server goes on serving");
    }

    @Test
    void aBodyThatStopsComingIsEndedAndItsBytesGoBack() throws Exception {
        Serving.awaitReady();
        double before = bufferedBytes();
        try (Socket socket = new Socket("127.0.0.1", base.getPort())) {
            socket.setSoTimeout(20_000); // a bound on a wait for what must come within 5 s and a sweep
            sendHalfABody(socket, before);

            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] chunk = new byte[4096];
            try {
                for (int n; (n = in.read(chunk)) >= 0; ) { // until the server closes the connection
                    answer.write(chunk, 0, n);
                }
            } catch (java.net.SocketTimeoutException e) {
                throw new AssertionError("the connection is still open; received: "
                        + answer.toString(StandardCharsets.UTF_8), e);
            }
            String text = answer.toString(StandardCharsets.UTF_8);
            assertTrue(text.startsWith("HTTP/1.1 408"), text);
            assertTrue(text.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), text);
            assertTrue(text.contains("serval.http.body-timeout") && text.contains("20000 of 40000 bytes"), text);
        }
        Serving.await("the stalled body's bytes given back", () -> given().get("/q/metrics"),
                response -> bufferedBytes() <= before);
        assertServes();
    }

    /** A client that goes away in the middle of its body: its bytes go back, and the server goes on. */
    @Test
    void aClientThatLeavesInTheMiddleOfItsBodyGivesItsBytesBack() throws Exception {
        Serving.awaitReady();
        double before = bufferedBytes();
        try (Socket socket = new Socket("127.0.0.1", base.getPort())) {
            sendHalfABody(socket, before);
        } // closed here, mid-body
        Serving.await("the bytes of the body left behind given back", () -> given().get("/q/metrics"),
                response -> bufferedBytes() <= before);
        assertServes();
    }
}
