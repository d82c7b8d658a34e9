package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ServerLiveRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** With {@code serval.grpc.port} set, gRPC is served on that port, and no longer on the HTTP port. */
@QuarkusTest
@TestProfile(GrpcPortProfile.class)
class GrpcPortTest {

    @TestHTTPResource("/")
    URL base;

    private static dev.serval.api.grpc.v2.ModelInferRequest text(String text) {
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.ByteBuffer raw = java.nio.ByteBuffer.allocate(4 + bytes.length).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt(bytes.length).put(bytes);
        return dev.serval.api.grpc.v2.ModelInferRequest.newBuilder().setModelName(Serving.MODEL)
                .addInputs(dev.serval.api.grpc.v2.ModelInferRequest.InferInputTensor.newBuilder().setName("text")
                        .setDatatype("BYTES").addShape(1))
                .addRawInputContents(com.google.protobuf.ByteString.copyFrom(raw.array())).build();
    }

    /** Its own port holds connections to what the HTTP port advertises: the same stream limit. */
    @Test
    void itsOwnPortAdvertisesTheHttpPortsStreamLimit() throws java.io.IOException {
        try (RawH2 h2 = new RawH2("127.0.0.1", GrpcPortProfile.PORT)) {
            assertEquals(128, h2.serverSettings().setting(RawH2.SETTINGS_MAX_CONCURRENT_STREAMS));
        }
    }

    /**
     * Its own port bounds rapid-reset floods per client address as the HTTP port does: a client that reconnects after
     * each GOAWAY is barred (its connection refused on its first stream) once past
     * {@code serval.http.max-floods-per-address}, while another address is answered.
     */
    @Test
    void itsOwnPortBarsAnAddressThatKeepsFlooding() throws java.io.IOException {
        byte[] call = RawH2.post("/inference.GRPCInferenceService/ServerLive", "application/grpc");
        String attacker = "127.0.0.21";
        boolean barred = false;
        for (int flood = 1; flood <= 16 && !barred; flood++) {
            try (RawH2 h2 = RawH2.from(attacker, "127.0.0.1", GrpcPortProfile.PORT)) {
                assertTrue(h2.resetFlood(1_000, call), "flood " + flood + " was not sent away");
            }
            barred = !answered(attacker, call);
            assertTrue(!barred || flood > 3, "barred after " + flood + " floods");
        }
        assertTrue(barred, "the address that kept flooding is still answered");
        assertTrue(answered("127.0.0.22", call), "another address is answered");
    }

    /** Whether a call's headers from {@code address} to the gRPC port get an answer's headers (any status). */
    private static boolean answered(String address, byte[] call) throws java.io.IOException {
        try (RawH2 h2 = RawH2.from(address, "127.0.0.1", GrpcPortProfile.PORT)) {
            h2.serverSettings();
            h2.ackSettings();
            h2.headers(1, call, true);
            h2.flush();
            RawH2.Frame frame = h2.readUntil(RawH2.HEADERS, RawH2.GOAWAY);
            return frame != null && frame.type() == RawH2.HEADERS;
        }
    }

    @Test
    void theServiceMovesToItsOwnPort() throws InterruptedException {
        ManagedChannel own = ManagedChannelBuilder.forAddress("127.0.0.1", GrpcPortProfile.PORT).usePlaintext().build();
        ManagedChannel http = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext().build();
        try {
            assertTrue(GRPCInferenceServiceGrpc.newBlockingStub(own).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverLive(ServerLiveRequest.getDefaultInstance()).getLive());
            StatusRuntimeException elsewhere = assertThrows(StatusRuntimeException.class, () -> GRPCInferenceServiceGrpc
                    .newBlockingStub(http).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverLive(ServerLiveRequest.getDefaultInstance()));
            assertTrue(elsewhere.getStatus().getCode() != Status.Code.OK, elsewhere.getStatus().toString());
            assertEquals(true, elsewhere.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED,
                    "answered at once, not left hanging: " + elsewhere.getStatus());

            // Messages count in serval.http.max-buffered-bytes: one larger than what is left is refused, retryable.
            var stub = GRPCInferenceServiceGrpc.newBlockingStub(own).withDeadlineAfter(30, TimeUnit.SECONDS);
            StatusRuntimeException full = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                    text(new String(new char[100_000]).replace('\0', 'a'))));
            assertEquals(Status.Code.UNAVAILABLE, full.getStatus().getCode(), full.getStatus().toString());
            assertTrue(full.getStatus().getDescription().contains("serval.http.max-buffered-bytes"));
            assertEquals(384, stub.modelInfer(text("a short text")).getOutputs(0).getShape(1),
                    "the budget came back: a request that fits is served");
        } finally {
            own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            http.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** {@code serval_http_buffered_bytes} now, read off the metrics endpoint. */
    private static double bufferedBytes() {
        for (String line : io.restassured.RestAssured.given().get("/q/metrics").asString().split("\n")) {
            if (line.startsWith("serval_http_buffered_bytes ")) {
                return Double.parseDouble(line.substring(line.indexOf(' ') + 1));
            }
        }
        throw new AssertionError("no serval_http_buffered_bytes in /q/metrics");
    }

    /** Opens a ModelInfer stream and sends a message prefix declaring {@code declared} bytes and {@code sent} of them. */
    private static HttpClientRequest halfAMessage(HttpClient client, int declared, int sent) throws Exception {
        HttpClientRequest request = client.request(HttpMethod.POST, GrpcPortProfile.PORT, "127.0.0.1",
                "/inference.GRPCInferenceService/ModelInfer").toCompletionStage().toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        request.setChunked(true).putHeader("content-type", "application/grpc").putHeader("te", "trailers");
        Buffer bytes = Buffer.buffer().appendByte((byte) 0).appendInt(declared).appendBytes(new byte[sent]);
        request.write(bytes).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return request;
    }

    /**
     * The attack: many streams each sending most of a large message and never the rest. Their bytes count from their
     * arrival (REST bodies' do too), so the stream whose bytes do not fit is refused at once, UNAVAILABLE, and the
     * bytes come back when the streams end: cancelled by the client, or their connection closed mid-message.
     */
    @Test
    void bytesInTransitCountFromTheirArrivalAndComeBackWhenTheStreamEnds() throws Exception {
        Vertx vertx = Vertx.vertx();
        // One connection per stream: each gets HTTP/2's whole initial window (64 KiB) to fill.
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false).setHttp2MultiplexingLimit(1), new PoolOptions().setHttp2MaxSize(4));
        try {
            double before = bufferedBytes();
            HttpClientRequest first = halfAMessage(client, 1_000_000, 30_000);
            HttpClientRequest second = halfAMessage(client, 1_000_000, 30_000);
            Serving.await("both streams' bytes counted", () -> io.restassured.RestAssured.given().get("/q/metrics"),
                    response -> bufferedBytes() >= before + 2 * 30_005);

            HttpClientRequest third = halfAMessage(client, 1_000_000, 30_000);
            HttpClientResponse refused = third.response().toCompletionStage().toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            assertEquals(200, refused.statusCode());
            assertEquals("14", refused.getHeader("grpc-status"), "UNAVAILABLE, trailers only");
            assertTrue(refused.getHeader("grpc-message").contains("serval.http.max-buffered-bytes"),
                    refused.getHeader("grpc-message"));
            assertEquals("1000", refused.getHeader("retry-after-ms"));

            first.reset(); // the client cancels its call
            second.connection().close(); // the client goes away in the middle of a message
            Serving.await("the bytes of the ended streams given back",
                    () -> io.restassured.RestAssured.given().get("/q/metrics"), response -> bufferedBytes() <= before);
        } finally {
            client.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * A message that stops arriving holds its bytes only until {@code serval.http.body-timeout} (5 s in this profile)
     * after its first bytes: then the call ends DEADLINE_EXCEEDED naming the setting and the bytes go back (before,
     * until the stream ended: the client's choice).
     */
    @Test
    void aStalledMessageEndsTheCallAfterTheBodyTimeout() throws Exception {
        Vertx vertx = Vertx.vertx();
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false), new PoolOptions().setHttp2MaxSize(1));
        try {
            double before = bufferedBytes();
            HttpClientRequest stalled = halfAMessage(client, 100_000, 10_000);
            HttpClientResponse ended = stalled.response().toCompletionStage().toCompletableFuture()
                    .get(20, TimeUnit.SECONDS);
            assertEquals("4", ended.getHeader("grpc-status"), "DEADLINE_EXCEEDED, trailers only");
            assertTrue(ended.getHeader("grpc-message").contains("serval.http.body-timeout"),
                    ended.getHeader("grpc-message"));
            Serving.await("the stalled message's bytes given back",
                    () -> io.restassured.RestAssured.given().get("/q/metrics"), response -> bufferedBytes() <= before);
        } finally {
            client.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
