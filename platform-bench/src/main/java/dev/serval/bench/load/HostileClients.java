package dev.serval.bench.load;

import com.google.protobuf.ByteString;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ModelInferRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Hostile clients in the background of the combined soak: one attack every {@code period}, the kinds taken in turn
 * ({@link Kind}), each on its own virtual thread, each waiting for Serval's answer at most
 * {@code serval.http.body-timeout} plus a margin. What each got is counted by kind, in the spelling of
 * {@link CombinedSoakGoals.Hostile}: {@code HTTP <status>}, {@code grpc <code>}, {@code no answer} (nothing within
 * the wait), {@code closed} (the connection ended without an answer) or an exception's class.
 *
 * <p>Threading: {@link #run} is one thread's loop (it starts the attacks and returns when it is told to stop and
 * the attacks it started have ended); the attacks count their outcomes into {@link #outcomes} (concurrent maps of
 * {@link LongAdder}s) from their own threads and Vert.x's event loop; {@link #outcomes()} may be read at any time.
 */
final class HostileClients implements AutoCloseable {

    /** The attacks and the answer the design promises each (docs/api.md, "Limits"). */
    enum Kind {
        /** A REST request whose body stops after a few bytes of its declared Content-Length. */
        REST_BODY_STALLED("REST body stalled", "HTTP 408"),
        /** A gRPC call whose message's frame stops after its length prefix and a few bytes. */
        GRPC_MESSAGE_UNFINISHED("gRPC message unfinished", "grpc DEADLINE_EXCEEDED"),
        /** A gRPC call whose message arrived whole but whose client never ends its stream (no half-close). */
        GRPC_NO_HALF_CLOSE("gRPC call not half-closed", "grpc DEADLINE_EXCEEDED"),
        /** A REST request whose tensor's shape and data disagree. */
        REST_BAD_SHAPE("REST bad shape", "HTTP 400"),
        /** A gRPC call whose raw contents are shorter than its shape says. */
        GRPC_BAD_SHAPE("gRPC bad shape", "grpc INVALID_ARGUMENT");

        final String label;
        final String expected;

        Kind(String label, String expected) {
            this.label = label;
            this.expected = expected;
        }
    }

    /** Declared length of a stalled body or message; only {@link #SENT} bytes of it are sent. */
    private static final int DECLARED = 4096;
    private static final int SENT = 64;
    private static final Duration MARGIN = Duration.ofSeconds(15);

    private final int port;
    private final Duration bodyTimeout;
    private final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
    private final HttpClient http2;
    private final java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private final GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub grpc;
    private final Map<Kind, Map<String, LongAdder>> outcomes = new ConcurrentHashMap<>();
    private final AtomicInteger running = new AtomicInteger();
    private volatile boolean stopped;

    HostileClients(int port, Duration bodyTimeout, ManagedChannel channel) {
        this.port = port;
        this.bodyTimeout = bodyTimeout;
        this.http2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                .setHttp2ClearTextUpgrade(false).setDefaultHost("127.0.0.1").setDefaultPort(port),
                new PoolOptions().setHttp2MaxSize(1));
        this.grpc = GRPCInferenceServiceGrpc.newBlockingStub(channel);
        for (Kind kind : Kind.values()) {
            outcomes.put(kind, new ConcurrentHashMap<>());
        }
    }

    /** Starts one attack every {@code period} until {@link #stop}, then waits for the started ones to end. */
    void run(Duration period) throws InterruptedException {
        Kind[] kinds = Kind.values();
        long start = System.nanoTime();
        for (long k = 0; !stopped; k++) {
            Kind kind = kinds[(int) (k % kinds.length)];
            running.incrementAndGet();
            Thread.ofVirtual().name("hostile-" + kind.name().toLowerCase()).start(() -> {
                try {
                    count(kind, attack(kind));
                } catch (Exception e) {
                    count(kind, failure(e));
                } finally {
                    running.decrementAndGet();
                }
            });
            long wait = start + (k + 1) * period.toNanos() - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Duration.ofNanos(wait)); // the attacks' pace
            }
        }
        long deadline = System.nanoTime() + bodyTimeout.plus(MARGIN).plus(MARGIN).toNanos();
        while (running.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(100); // attacks end on their own within their bounded waits
        }
    }

    void stop() {
        stopped = true;
    }

    /** Attacks started and not yet ended. */
    int running() {
        return running.get();
    }

    /** The outcomes so far, per kind, as {@link CombinedSoakGoals.Hostile}s. */
    List<CombinedSoakGoals.Hostile> outcomes() {
        List<CombinedSoakGoals.Hostile> all = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            Map<String, Long> counts = new LinkedHashMap<>();
            outcomes.get(kind).forEach((outcome, count) -> counts.put(outcome, count.sum()));
            all.add(new CombinedSoakGoals.Hostile(kind.label, kind.expected, counts));
        }
        return all;
    }

    /** An exception as an outcome: its class and the start of its message (outcomes are few; messages vary). */
    private static String failure(Throwable e) {
        String message = String.valueOf(e.getMessage());
        return e.getClass().getSimpleName() + ": " + message.substring(0, Math.min(80, message.length()));
    }

    private void count(Kind kind, String outcome) {
        outcomes.get(kind).computeIfAbsent(outcome, o -> new LongAdder()).increment();
    }

    private String attack(Kind kind) throws Exception {
        return switch (kind) {
            case REST_BODY_STALLED -> stalledBody();
            case GRPC_MESSAGE_UNFINISHED -> unfinishedGrpc(frame(DECLARED).slice(0, 5 + SENT));
            case GRPC_NO_HALF_CLOSE -> unfinishedGrpc(frame(16));
            case REST_BAD_SHAPE -> badRestShape();
            case GRPC_BAD_SHAPE -> badGrpcShape();
        };
    }

    /** Headers declaring {@link #DECLARED} bytes, {@link #SENT} of them, then silence until Serval answers. */
    private String stalledBody() throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout((int) bodyTimeout.plus(MARGIN).toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(("POST /v2/models/" + LoadBenchmark.MINILM_DEPLOYMENT + "/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + DECLARED + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(("{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\""
                    + "x".repeat(SENT)).substring(0, SENT).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b >= 0 && b != '\n'; b = in.read()) {
                line.append((char) b);
            }
            String[] parts = line.toString().trim().split(" ");
            return parts.length >= 2 && parts[0].startsWith("HTTP/") ? "HTTP " + parts[1] : "closed";
        } catch (SocketTimeoutException e) {
            return "no answer";
        }
    }

    /**
     * A gRPC call over HTTP/2 that sends {@code bytes} and never ends its stream; the answer is the call's
     * {@code grpc-status}, from its trailers (or its headers, for a trailers-only answer). The stream is reset
     * afterwards, so that the connection does not keep it.
     */
    private String unfinishedGrpc(Buffer bytes) throws Exception {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setURI("/inference.GRPCInferenceService/ModelInfer")
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/grpc").putHeader("te", "trailers")
                .setIdleTimeout(bodyTimeout.plus(MARGIN).toMillis());
        HttpClientRequest[] sent = new HttpClientRequest[1];
        Future<String> answer = http2.request(options).compose(request -> {
            sent[0] = request;
            request.exceptionHandler(failure -> { }); // the reset below, or the server's: the answer tells
            request.setChunked(true); // no Content-Length: the message never ends (HTTP/2 frames it anyway)
            return request.write(bytes).compose(v -> request.response());
        }).compose(response -> response.body().map(body -> {
            String status = response.getTrailer("grpc-status");
            if (status == null) {
                status = response.getHeader("grpc-status");
            }
            return status == null ? "HTTP " + response.statusCode() + " without grpc-status"
                    : "grpc " + Status.fromCodeValue(Integer.parseInt(status)).getCode();
        }));
        try {
            return answer.toCompletionStage().toCompletableFuture().get(bodyTimeout.plus(MARGIN).toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return "no answer";
        } catch (java.util.concurrent.ExecutionException e) {
            return failure(e.getCause());
        } finally {
            if (sent[0] != null) {
                sent[0].reset();
            }
        }
    }

    /** A gRPC frame (no compression) of a {@code ModelInferRequest} to the no-op deployment padded to about {@code size}. */
    private static Buffer frame(int size) {
        ModelInferRequest request = GrpcBenchmark.noop().toBuilder().setId("x".repeat(Math.max(0, size - 40)))
                .build();
        byte[] message = request.toByteArray();
        return Buffer.buffer().appendByte((byte) 0).appendInt(message.length).appendBytes(message);
    }

    /** Shape [1, 4] with three values, to the pipeline. */
    private String badRestShape() throws IOException, InterruptedException {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                        + "/v2/models/" + CombinedSoakBenchmark.PIPELINE + "/infer"))
                .timeout(bodyTimeout.plus(MARGIN)).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\","
                        + "\"shape\":[1,4],\"data\":[1,2,3]}]}")).build(), HttpResponse.BodyHandlers.ofString());
        return "HTTP " + answer.statusCode();
    }

    /** FP32 [1, 4] with 12 bytes of raw contents, to the no-op deployment. */
    private String badGrpcShape() {
        ModelInferRequest request = GrpcBenchmark.noop().toBuilder()
                .setRawInputContents(0, ByteString.copyFrom(new byte[12])).build();
        try {
            grpc.withDeadlineAfter(bodyTimeout.plus(MARGIN).toMillis(), TimeUnit.MILLISECONDS).modelInfer(request);
            return "grpc OK";
        } catch (RuntimeException e) {
            return "grpc " + Status.fromThrowable(e).getCode();
        }
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
