package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code serval.http.body-timeout} (2 s in this profile) bounds a stall, not a body's whole upload: a body that keeps
 * coming at least at {@code serval.http.min-body-rate} (64 KiB/s by default) is read to its end however long it takes,
 * and one that trickles slower is cut.
 */
@QuarkusTest
@TestProfile(ConnectionLimitsProfile.class)
class SlowBodyTest {

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    /** A JSON body of about {@code size} bytes: one text input padded with spaces inside the JSON. */
    private static byte[] body(int size) {
        String head = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"slow\"]}]";
        return (head + " ".repeat(Math.max(0, size - head.length() - 1)) + "}").getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Sends {@code body} in {@code chunk}-byte pieces, one every {@code pauseMillis} (the pace of a slow client, which
     * is what is tested: the pauses are the client's, not a wait for the server), then reads the answer.
     */
    private String sendSlowly(byte[] body, int chunk, long pauseMillis) throws IOException, InterruptedException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(20_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + Serving.INFER + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Connection: close\r\nContent-Length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            try {
                for (int at = 0; at < body.length; at += chunk) {
                    out.write(body, at, Math.min(chunk, body.length - at));
                    out.flush();
                    Thread.sleep(pauseMillis);
                }
            } catch (SocketException closed) {
                // cut by the server: its answer is read below
            }
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            in.transferTo(answer);
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    @Test
    void aBodyThatKeepsComingPastTheTimeoutIsReadToItsEnd() throws Exception {
        // 640 KiB at 16 KiB every 100 ms (about 160 KiB/s): 4 s, twice the timeout, above the minimum rate throughout.
        String answer = sendSlowly(body(640 * 1024), 16 * 1024, 100);
        assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
    }

    @Test
    void aBodyThatTricklesBelowTheMinimumRateIsCut() throws Exception {
        // 1 KiB every 100 ms (10 KiB/s): past the 2 s of grace, far below 64 KiB/s.
        String answer = sendSlowly(body(64 * 1024), 1024, 100);
        assertTrue(answer.startsWith("HTTP/1.1 408"), answer);
        assertTrue(answer.contains("serval.http.min-body-rate"), answer);
    }
}
