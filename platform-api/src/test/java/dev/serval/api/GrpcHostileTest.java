package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.api.grpc.v2.ModelInferRequest;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that hold gRPC calls open, driven with raw HTTP/2 frames: a unary call whose message has all arrived but
 * whose client never ends its stream (half-close), and many calls or many bytes on one connection. What a call holds
 * counts in {@code serval.http.max-buffered-bytes} until it is answered or gone, a unary call that does not end within
 * {@code serval.http.body-timeout} (4 s here) ends DEADLINE_EXCEEDED, and one connection may hold only
 * {@code serval.grpc.max-calls-per-connection} calls (4 here) and {@code serval.grpc.max-bytes-per-connection} bytes
 * (256 KiB here).
 */
@QuarkusTest
@TestProfile(GrpcHostileProfile.class)
class GrpcHostileTest {

    @TestHTTPResource("/")
    URL base;

    private Vertx vertx;
    private HttpClient client;

    @BeforeEach
    void connect() {
        Serving.awaitReady();
        vertx = Vertx.vertx();
        // Every stream on one connection.
        client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false).setHttp2MultiplexingLimit(-1), new PoolOptions().setHttp2MaxSize(1));
    }

    @AfterEach
    void disconnect() throws Exception {
        client.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    /** {@code serval_http_buffered_bytes} now, read off the metrics endpoint. */
    private static double bufferedBytes() {
        for (String line : RestAssured.given().get("/q/metrics").asString().split("\n")) {
            if (line.startsWith("serval_http_buffered_bytes ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1));
            }
        }
        throw new AssertionError("no serval_http_buffered_bytes in /q/metrics");
    }

    /** A whole ModelInfer message (prefix included) of about {@code size} bytes. */
    private static Buffer message(int size) {
        byte[] payload = ModelInferRequest.newBuilder().setModelName("nope").setId(new String(new char[size])
                .replace('\0', 'x')).build().toByteArray();
        return Buffer.buffer().appendByte((byte) 0).appendInt(payload.length).appendBytes(payload);
    }

    /** Opens a call of {@code method} on the shared connection and sends {@code bytes}, without ending the stream. */
    private HttpClientRequest open(String method, Buffer bytes) throws Exception {
        HttpClientRequest request = client.request(HttpMethod.POST, base.getPort(), "127.0.0.1",
                "/inference.GRPCInferenceService/" + method).toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        request.setChunked(true).putHeader("content-type", "application/grpc").putHeader("te", "trailers");
        request.write(bytes).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return request;
    }

    private static HttpClientResponse answer(HttpClientRequest request) throws Exception {
        return request.response().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }

    /** The grpc-status of an answer: in its headers (trailers only) or in its trailers. */
    private static String status(HttpClientResponse response, String[] message) throws Exception {
        if (response.getHeader("grpc-status") != null) {
            message[0] = response.getHeader("grpc-message");
            return response.getHeader("grpc-status");
        }
        response.body().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
        message[0] = response.getTrailer("grpc-message");
        return response.getTrailer("grpc-status");
    }

    /**
     * The attack of issue 37: a unary call's message all sent, its stream never ended. Its bytes count in the budget
     * while it is held (they used to go back as soon as the message was complete, and the call waited for the
     * client's end with no deadline), and the call ends DEADLINE_EXCEEDED once the body timeout passes, naming it.
     */
    @Test
    void aWholeMessageWhoseCallNeverEndsCountsInTheBudgetUntilTheBodyTimeoutEndsIt() throws Exception {
        double before = bufferedBytes();
        Buffer whole = message(100_000);
        HttpClientRequest held = open("ModelInfer", whole);

        Serving.await("the whole message counted while its call is held", () -> RestAssured.given().get("/q/metrics"),
                response -> bufferedBytes() >= before + whole.length());
        String[] message = new String[1];
        assertEquals("4", status(answer(held), message), "DEADLINE_EXCEEDED");
        assertTrue(message[0].contains("serval.http.body-timeout") && message[0].contains("end"), message[0]);
        Serving.await("the held message's bytes given back", () -> RestAssured.given().get("/q/metrics"),
                response -> bufferedBytes() <= before);
    }

    /** A fifth call on a connection that has four open is refused at once, naming the limit; the others go on. */
    @Test
    void callsPastTheLimitOfAConnectionAreRefusedNamingIt() throws Exception {
        List<HttpClientRequest> open = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            open.add(open("ModelInfer", Buffer.buffer().appendByte((byte) 0).appendInt(1000)));
        }
        String[] message = new String[1];
        assertEquals("8", status(answer(open("ModelInfer", message(10))), message), "RESOURCE_EXHAUSTED");
        assertTrue(message[0].contains("serval.grpc.max-calls-per-connection"), message[0]);

        open.forEach(HttpClientRequest::reset);
        HttpClientRequest live = open("ServerLive", Buffer.buffer().appendByte((byte) 0).appendInt(0));
        live.end();
        assertEquals("0", status(answer(live), message), "served once the others ended: " + message[0]);
    }

    /**
     * Bytes held by one connection's calls are bounded: with 256 KiB held, the call whose bytes do not fit is refused
     * RESOURCE_EXHAUSTED naming the limit, while another connection is served.
     */
    @Test
    void bytesPastTheLimitOfAConnectionAreRefusedNamingIt() throws Exception {
        HttpClientRequest first = open("ModelInfer", message(100_000));
        HttpClientRequest second = open("ModelInfer", message(100_000));
        HttpClientRequest third = open("ModelInfer", message(100_000));
        String[] message = new String[1];
        assertEquals("8", status(answer(third), message), "RESOURCE_EXHAUSTED");
        assertTrue(message[0].contains("serval.grpc.max-bytes-per-connection"), message[0]);

        HttpClient other = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false), new PoolOptions().setHttp2MaxSize(1));
        try {
            HttpClientRequest live = other.request(HttpMethod.POST, base.getPort(), "127.0.0.1",
                    "/inference.GRPCInferenceService/ServerLive").toCompletionStage().toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            live.putHeader("content-type", "application/grpc").putHeader("te", "trailers");
            live.end(Buffer.buffer().appendByte((byte) 0).appendInt(0));
            assertEquals("0", status(answer(live), message), "another connection is served: " + message[0]);
        } finally {
            other.close();
            first.reset();
            second.reset();
        }
    }
}
