package dev.serval.api;

import static dev.serval.api.RawH2.CONTINUATION;
import static dev.serval.api.RawH2.GOAWAY;
import static dev.serval.api.RawH2.HEADERS;
import static dev.serval.api.RawH2.REFUSED_STREAM;
import static dev.serval.api.RawH2.RST_STREAM;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http2.Http2Headers;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.URL;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 (h2c) at the edge, written frame by frame as an attacker would: a connection may hold only the streams the
 * server advertises ({@code SETTINGS_MAX_CONCURRENT_STREAMS}, refused past it with REFUSED_STREAM, and a connection
 * that keeps trying is sent away), bounded header bytes, no CONTINUATION or reset floods; early refusals are
 * well-formed HTTP/2 answers; and a connection closed with every stream open does not silence the server.
 */
@QuarkusTest
class Http2EdgeTest {

    /** {@code quarkus.http.limits.max-concurrent-streams} in application.properties. */
    private static final int MAX_STREAMS = 128;

    /** {@code serval.http.max-floods-per-address}'s default. */
    private static final int MAX_FLOODS_PER_ADDRESS = 3;

    /** HTTP/2's ENHANCE_YOUR_CALM. */
    private static final int ENHANCE_YOUR_CALM = 0xb;

    @TestHTTPResource("/")
    URL base;

    @BeforeEach
    void ready() {
        Serving.awaitReady();
    }

    @AfterEach
    void stillServes() {
        given().get("/v2/health/live").then().statusCode(200);
    }

    private RawH2 connect(long... settings) throws IOException {
        return new RawH2(base.getHost(), base.getPort(), settings);
    }

    /** A client of its own address (127.0.0.0/8), so that what the server bounds per address stays with the test. */
    private RawH2 connectFrom(String address) throws IOException {
        return RawH2.from(address, base.getHost(), base.getPort());
    }

    private static final String INFER = "/v2/models/" + Serving.MODEL + "/infer";

    /** RFC 9113 §8.2.2: connection-specific fields make a message malformed; the refusal ends its stream instead. */
    @Test
    void anEarlyRefusalOverHttp2CarriesNoConnectionHeader() throws IOException {
        try (RawH2 h2 = connect()) {
            h2.serverSettings();
            h2.ackSettings();
            h2.headers(1, RawH2.headerBlock(":method", "POST", ":scheme", "http", ":path", INFER, ":authority",
                    "localhost", "content-type", "application/json", "content-length", "10000000"), false);
            h2.flush();
            RawH2.Frame answer = h2.readUntil(HEADERS);
            assertNotNull(answer, "the refusal is answered");
            Http2Headers headers = answer.headers();
            assertEquals("413", headers.status().toString());
            assertNull(headers.get("connection"), "no Connection header in an HTTP/2 answer: " + headers);
            assertNull(headers.get("keep-alive"), headers.toString());
            // The answer ends the stream; the client, still sending, is told to stop without error.
            RawH2.Frame reset = h2.readUntil(RST_STREAM);
            assertNotNull(reset, "the connection stays open");
            assertEquals(1, reset.stream());
            assertEquals(0, reset.errorCode(), "NO_ERROR");
            // The connection goes on: another stream is served on it.
            h2.headers(3, RawH2.get("/v2/health/live"), true);
            h2.flush();
            RawH2.Frame next;
            do {
                next = h2.readUntil(HEADERS, GOAWAY);
                assertNotNull(next, "the connection stays open");
                assertFalse(next.type() == GOAWAY, "the connection stays open");
            } while (next.stream() != 3);
            assertEquals("200", next.headers().status().toString());
        }
    }

    @Test
    void theServerAdvertisesItsStreamLimit() throws IOException {
        try (RawH2 h2 = connect()) {
            assertEquals(MAX_STREAMS, h2.serverSettings().setting(RawH2.SETTINGS_MAX_CONCURRENT_STREAMS));
        }
    }

    /**
     * Opens {@code MAX_STREAMS + extra} streams whose bodies never come; returns the streams the server refused with
     * REFUSED_STREAM among the first frames read, until {@code extra} refusals or a GOAWAY.
     */
    private static Set<Integer> openPastTheLimit(RawH2 h2, int extra) throws IOException {
        for (int i = 0; i < MAX_STREAMS + extra; i++) {
            h2.headers(1 + 2 * i, RawH2.post(INFER, "application/json"), false);
        }
        h2.flush();
        Set<Integer> refused = new HashSet<>();
        while (refused.size() < extra) {
            RawH2.Frame frame = h2.readUntil(RST_STREAM, GOAWAY);
            if (frame == null || frame.type() == GOAWAY) {
                break;
            }
            assertEquals(REFUSED_STREAM, frame.errorCode(), "the reset of stream " + frame.stream());
            refused.add(frame.stream());
        }
        return refused;
    }

    @Test
    void streamsPastTheAdvertisedLimitAreRefused() throws IOException {
        try (RawH2 h2 = connect()) {
            h2.serverSettings();
            h2.ackSettings();
            Set<Integer> refused = openPastTheLimit(h2, 5);
            assertEquals(5, refused.size(), "refused: " + refused);
            for (int stream : refused) {
                assertTrue(stream > 2 * MAX_STREAMS, "stream " + stream + " was within the limit");
            }
        }
    }

    /** A client that never acknowledges the server's SETTINGS is held to the limit all the same. */
    @Test
    void streamsPastTheLimitAreRefusedWithoutTheSettingsAcknowledged() throws IOException {
        try (RawH2 h2 = connect()) {
            h2.serverSettings();
            Set<Integer> refused = openPastTheLimit(h2, 5);
            assertEquals(5, refused.size(), "refused: " + refused);
        }
    }

    /** The streams a connection is held to are those open now: once earlier ones end, new ones are served. */
    @Test
    void streamsAreAdmittedAgainOnceEarlierOnesEnd() throws IOException {
        try (RawH2 h2 = connect()) {
            h2.serverSettings();
            for (int i = 0; i < MAX_STREAMS; i++) {
                h2.headers(1 + 2 * i, RawH2.post(INFER, "application/json"), false);
            }
            for (int i = 0; i < MAX_STREAMS; i++) {
                h2.rst(1 + 2 * i, RawH2.CANCEL);
            }
            int next = 1 + 2 * MAX_STREAMS;
            h2.headers(next, RawH2.get("/v2/health/live"), true);
            h2.flush();
            RawH2.Frame answer;
            do {
                answer = h2.readUntil(HEADERS, RST_STREAM, GOAWAY);
                assertNotNull(answer, "the connection was closed");
                assertFalse(answer.type() == GOAWAY, "the connection was sent away");
            } while (answer.stream() != next);
            assertEquals(HEADERS, answer.type(), "stream " + next + " was reset: " + answer);
            assertEquals("200", answer.headers().status().toString());
        }
    }

    /**
     * Closing a connection whose streams all wait for flow-control window walks every stream on its event loop; with
     * the streams bounded that is brief: another client is answered at once (within a generous bound).
     */
    @Test
    void aConnectionClosedWithEveryStreamBlockedDoesNotSilenceTheServer() throws IOException {
        for (int round = 0; round < 4; round++) {
            try (RawH2 h2 = connect(RawH2.SETTINGS_INITIAL_WINDOW_SIZE, 0)) {
                h2.serverSettings();
                h2.ackSettings();
                for (int i = 0; i < MAX_STREAMS; i++) {
                    h2.headers(1 + 2 * i, RawH2.get("/v2/models/" + Serving.MODEL), true);
                }
                h2.flush();
                // Every stream's answer is blocked (no window): its headers come, its body cannot.
                int answered = 0;
                while (answered < MAX_STREAMS) {
                    RawH2.Frame frame = h2.readUntil(HEADERS, RST_STREAM, GOAWAY);
                    assertNotNull(frame, "the connection was closed");
                    assertEquals(HEADERS, frame.type(), frame.toString());
                    answered++;
                }
            } // closed with every answer's body pending
            try (java.net.Socket socket = new java.net.Socket(base.getHost(), base.getPort())) {
                socket.setSoTimeout(5_000); // a generous bound: the server must not be silenced for longer
                socket.getOutputStream().write("GET /v2/health/live HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                assertEquals(200, RawHttp.read(socket.getInputStream()).status());
            }
        }
    }

    @Test
    void aConnectionThatKeepsOpeningStreamsPastTheLimitIsSentAway() throws IOException {
        try (RawH2 h2 = connectFrom("127.0.0.11")) {
            h2.serverSettings();
            h2.ackSettings();
            for (int i = 0; i < MAX_STREAMS + 1_000; i++) {
                h2.headers(1 + 2 * i, RawH2.post(INFER, "application/json"), false);
            }
            h2.flush();
            RawH2.Frame goAway = h2.readUntil(GOAWAY);
            assertNotNull(goAway, "closed without a GOAWAY");
            assertTrue(h2.closedByServer(), "the connection is closed after its GOAWAY");
        }
    }

    @Test
    void aHeaderListPastTheAdvertisedSizeIsNotServed() throws IOException {
        try (RawH2 h2 = connect()) {
            long advertised = h2.serverSettings().setting(RawH2.SETTINGS_MAX_HEADER_LIST_SIZE);
            assertTrue(advertised > 0 && advertised <= 64 * 1024, "advertised " + advertised);
            h2.ackSettings();
            h2.headers(1, RawH2.headerBlock(":method", "GET", ":scheme", "http", ":path", "/v2/health/live",
                    ":authority", "localhost", "x-filler", "a".repeat(15_000)), true);
            h2.flush();
            RawH2.Frame frame = h2.readUntil(HEADERS, RST_STREAM, GOAWAY);
            if (frame != null && frame.type() == HEADERS) {
                assertEquals("431", frame.headers().status().toString());
            }
        }
    }

    @Test
    void aContinuationFloodEndsTheConnection() throws IOException {
        try (RawH2 h2 = connectFrom("127.0.0.12")) {
            h2.serverSettings();
            h2.ackSettings();
            h2.frame(HEADERS, 0, 1, RawH2.get("/v2/health/live")); // no END_HEADERS: CONTINUATION frames follow
            byte[] one = RawH2.headerBlock("x", "");
            try {
                for (int i = 0; i < 10_000; i++) {
                    h2.frame(CONTINUATION, 0, 1, one);
                }
                h2.flush();
            } catch (IOException closed) {
                // the server closed the connection while the flood was being written
            }
            assertTrue(h2.closedByServer(), "the connection survives a CONTINUATION flood");
        }
    }

    @Test
    void aRapidResetFloodEndsTheConnection() throws IOException {
        try (RawH2 h2 = connectFrom("127.0.0.13")) {
            assertTrue(rapidResetFlood(h2), "the connection survives 1,000 resets");
        }
    }

    /** Sends 1,000 HEADERS + RST_STREAM pairs; whether the server sent the connection away (or closed it). */
    private static boolean rapidResetFlood(RawH2 h2) throws IOException {
        return h2.resetFlood(1_000, RawH2.get("/v2/health/live"));
    }

    /**
     * A client that reconnects after each GOAWAY gets no fresh allowance: past {@code serval.http.max-floods-per-address}
     * connections sent away within the window, its address's streams are refused with their connection, before any
     * route sees them, while other addresses are served. (A flood whose error reaches no stream's connection handler
     * goes uncounted: the bound is best-effort, hence the loop.)
     */
    @Test
    void aClientThatReconnectsAfterEachFloodIsBarredByItsAddress() throws IOException {
        String attacker = "127.0.0.14";
        boolean barred = false;
        for (int flood = 1; flood <= 4 * (MAX_FLOODS_PER_ADDRESS + 1) && !barred; flood++) {
            try (RawH2 h2 = connectFrom(attacker)) {
                assertTrue(rapidResetFlood(h2), "flood " + flood + " was not sent away");
            }
            barred = !served(attacker);
            assertTrue(!barred || flood > MAX_FLOODS_PER_ADDRESS, "barred after " + flood + " floods");
        }
        assertTrue(barred, "the address that kept flooding is still served");
        assertFalse(served(attacker), "the barred address stays barred");
        assertTrue(served("127.0.0.15"), "another address is served");
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        assertTrue(metrics.matches("(?s).*serval_http2_floods_total [1-9].*"), "floods counted");
        assertTrue(metrics.matches("(?s).*serval_http2_barred_streams_total [1-9].*"), "refusals counted");
    }

    /**
     * Whether a GET from {@code address} over HTTP/2 is answered 200; false when its connection is refused (a GOAWAY
     * ENHANCE_YOUR_CALM, or closed, and no answer).
     */
    private boolean served(String address) throws IOException {
        try (RawH2 h2 = connectFrom(address)) {
            h2.serverSettings();
            h2.ackSettings();
            h2.headers(1, RawH2.get("/v2/health/live"), true);
            h2.flush();
            RawH2.Frame frame = h2.readUntil(HEADERS, GOAWAY);
            if (frame != null && frame.type() == HEADERS) {
                assertEquals("200", frame.headers().status().toString());
                return true;
            }
            if (frame != null) {
                assertEquals(ENHANCE_YOUR_CALM, frame.errorCode(), "the GOAWAY's code");
            }
            assertTrue(h2.closedByServer(), "a refused connection is closed");
            return false;
        }
    }
}
