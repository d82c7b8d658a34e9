package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An HTTP/1.1 answer that says {@code Connection: close} closes its connection once it is written and the client has
 * stopped sending: a client that declared an oversized body and sends nothing more must not hold the connection until
 * it gives up, and one that sends it anyway must get the answer.
 */
@QuarkusTest
class ConnectionCloseTest {

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    /**
     * Sends {@code head} (with the blank line) and no body, keeping the connection open on the client's side; returns
     * everything read until the server closes it.
     */
    static String answerUntilClosed(URL base, String head) throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000); // a bound on a wait for what must come at once
            socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] chunk = new byte[4096];
            try {
                for (int n; (n = in.read(chunk)) >= 0; ) {
                    answer.write(chunk, 0, n);
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the connection is still open after: "
                        + answer.toString(StandardCharsets.ISO_8859_1), e);
            }
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** Over Serval's limit (8 MiB) and under Quarkus's (16 MiB): Serval refuses it. */
    @Test
    void aDeclaredOversizedBodyIsRefusedAndItsConnectionClosed() throws IOException {
        String answer = answerUntilClosed(base, "POST " + Serving.INFER + " HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 413"), answer);
        assertTrue(answer.toLowerCase(Locale.ROOT).contains("connection: close"), answer);
    }

    /**
     * A client that writes its whole body before it reads (as most libraries do) gets the answer, not a broken pipe:
     * the server reads on and drops the body, then closes.
     */
    @Test
    void aClientThatSendsItsOversizedBodyAnywayGetsTheAnswerThenTheClose() throws IOException {
        int size = 10_000_000;
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + Serving.INFER + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + size + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            for (int sent = 0; sent < size; sent += chunk.length) {
                out.write(chunk, 0, Math.min(chunk.length, size - sent));
            }
            out.flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            try {
                socket.getInputStream().transferTo(answer);
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the connection is still open after: "
                        + answer.toString(StandardCharsets.ISO_8859_1), e);
            }
            String text = answer.toString(StandardCharsets.ISO_8859_1);
            assertTrue(text.startsWith("HTTP/1.1 413"), text);
        }
    }
}
