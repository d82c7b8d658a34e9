package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Connections are bounded: past {@code quarkus.http.limits.max-connections} a new one is closed as it is accepted and
 * counted; a connection silent for {@code quarkus.http.idle-timeout} is closed; an answer that says
 * {@code Connection: close} closes its connection.
 */
@QuarkusTest
@TestProfile(ConnectionLimitsProfile.class)
class ConnectionLimitsTest {

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    private static double meter(String name) {
        return given().get("/q/metrics").asString().lines().filter(line -> line.startsWith(name))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    /** Whether the server answers a keep-alive request on a new connection (false: it was closed unanswered). */
    private static boolean answered(Socket socket) throws IOException {
        socket.setSoTimeout(10_000);
        socket.getOutputStream().write("GET /v2/health/live HTTP/1.1\r\nHost: localhost\r\n\r\n"
                .getBytes(StandardCharsets.US_ASCII));
        InputStream in = socket.getInputStream();
        try {
            int first = in.read();
            return first >= 0;
        } catch (SocketException reset) {
            return false;
        }
    }

    @Test
    void connectionsPastTheBoundAreClosedAsTheyComeAndCounted() throws IOException {
        double refusedBefore = meter("vertx_http_connections_rejected_total");
        List<Socket> held = new ArrayList<>();
        int refused = 0;
        try {
            for (int i = 0; i < ConnectionLimitsProfile.MAX_CONNECTIONS + 8; i++) {
                Socket socket = new Socket(base.getHost(), base.getPort());
                held.add(socket);
                if (!answered(socket)) {
                    refused++;
                }
            }
            assertTrue(refused >= 8, refused + " connections refused");
        } finally {
            for (Socket socket : held) {
                socket.close();
            }
        }
        Serving.await("the connections closed counted out", () -> given().get("/q/metrics"),
                response -> meter("vertx_http_connections_current") < ConnectionLimitsProfile.MAX_CONNECTIONS / 2);
        assertTrue(meter("vertx_http_connections_rejected_total") >= refusedBefore + refused);
        given().get("/v2/health/live").then().statusCode(200);
    }

    @Test
    void aSilentConnectionIsClosed() throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(20_000); // a bound on a wait for the 3 s idle timeout
            try {
                assertEquals(-1, socket.getInputStream().read());
            } catch (SocketTimeoutException e) {
                throw new AssertionError("a silent connection is still open", e);
            }
        }
    }

    /** Refused on its headers without the token, with a body declared and never sent. */
    @Test
    void anUnauthorisedAnswerThatSaysCloseCloses() throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(2_000); // well under the idle timeout: a close must come from the answer
            socket.getOutputStream().write(("POST /v2/repository/index HTTP/1.1\r\nHost: localhost\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            StringBuilder text = new StringBuilder();
            byte[] buffer = new byte[4096];
            boolean closed = false;
            try {
                for (int n; (n = socket.getInputStream().read(buffer)) >= 0; ) {
                    text.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                // still open
            }
            String answer = text.toString();
            assertTrue(answer.startsWith("HTTP/1.1 401"), answer);
            if (answer.toLowerCase(Locale.ROOT).contains("connection: close")) {
                assertTrue(closed, "the answer says close and the connection stays open: " + answer);
            }
        }
    }
}
