package dev.serval.bench.load;

import com.google.protobuf.ByteString;
import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.grpc.client.GrpcClient;
import io.vertx.grpc.client.GrpcClientResponse;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * gRPC against REST on the same server (issue 20): the OIP gRPC {@code ModelInfer} (raw tensor contents: what gRPC
 * clients send) through two clients, grpc-java (one HTTP/2 channel) and Vert.x's gRPC client (one HTTP/2 connection,
 * the same Vert.x as the REST load generator, so that the two protocols are compared with clients of one kind), and
 * OIP REST (the load generator's HTTP/1.1 connections, JSON), on the
 * no-op deployment {@code echo} (a FP32 [1, 4] tensor: the platform's own cost); and gRPC through Vert.x's HTTP/2
 * client with each call's frame prepared beforehand ({@link #cannedHttp2}: the REST generator's way, so that the two
 * protocols' servers are compared with clients doing the same work) and on the default MiniLM (one short
 * chat text per request). For each, in alternation and {@code --rounds} times: a closed loop of 1 call in flight
 * (latency) and of 8 (throughput), {@code --measure} each after an unrecorded warm-up, with the server's and the
 * generator's CPU time per request. Goal from the issue: gRPC noop throughput at least REST's, at equal p50.
 *
 * <p>Output: {@code platform-bench/target/grpc/summary.md} (or {@code --out DIR}). About 8 minutes (2 rounds); from the
 * repository root:
 * <pre>{@code
 * bin/loadbench --grpc [--measure 10s] [--rounds 2] [--out DIR]
 * }</pre>
 */
public final class GrpcBenchmark {

    private static final String USAGE = "usage: bin/loadbench --grpc [--measure 10s] [--rounds 2] [--channels 1] [--profile] "
            + "[--out DIR] "
            + "[--serval-opt -Dkey=value]...";
    private static final Duration WARM_UP = Duration.ofSeconds(5);
    private static final Duration DRAIN = Duration.ofSeconds(3);

    private GrpcBenchmark() {
    }

    /** One closed-loop run's figures: answers per second, latency percentiles in ms, failed calls. */
    /** {@code cpu}: the generator's and the server's shares of the machine over the run (warm-up included). */
    record Figures(double throughput, double p50, double p99, long errors, MachineUsage.Shares cpu) {

        /** A REST run's figures. */
        static Figures of(RunResult run) {
            return new Figures(run.throughput(), run.p50(), run.p99(),
                    run.errors().values().stream().mapToLong(Long::longValue).sum(), run.cpu());
        }
    }

    /** A measured run, profiled as {@code name} when {@code profiler} is not null. */
    private interface Run<T> {
        T run() throws Exception;
    }

    private static <T> T profiled(Profiler profiler, String name, Run<T> run) throws Exception {
        if (profiler == null) {
            return run.run();
        }
        profiler.start();
        try {
            return run.run();
        } finally {
            profiler.stop(name);
        }
    }

    private static void row(StringBuilder md, String workload, int round, String protocol, double p50One,
            Figures eight, Figures rest) {
        md.append(String.format(Locale.ROOT, "| %s | %d | %s | %.3f | %.0f | %.2f | %.3f | %.1f | %.1f |%n", workload,
                round, protocol, p50One, eight.throughput(), eight.throughput() / rest.throughput(), eight.p50(),
                MachineUsage.microsPerRequest(eight.cpu().server(), eight.throughput()),
                MachineUsage.microsPerRequest(eight.cpu().generator(), eight.throughput())));
    }


    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of("--profile"), Set.of("--measure", "--rounds", "--channels", "--out",
                "--serval-opt"));
        boolean profile = arguments(args).contains("--profile");
        List<String> arguments = Arrays.asList(args);
        int channels = Integer.parseInt(Options.value(arguments, "--channels", "1"));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(10));
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", "2"));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/grpc"));
        Files.createDirectories(out);
        List<String> settings = new ArrayList<>(List.of("-XX:+EnableDynamicAgentLoading",
                "-Dserval.api.auth-enabled=false",
                "-Dserval.deployments.echo.model=noop"));
        settings.addAll(Options.servalOptions(args));
        List<String> texts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);

        StringBuilder md = new StringBuilder("# OIP gRPC against OIP REST\n\n");
        md.append(String.format(Locale.ROOT, "Run %s, load average before %s; `bin/loadbench --grpc --measure %ds "
                + "--rounds %d`. Closed loops of 1 and 8 requests in flight, %d s each, against one Serval. REST: "
                + "HTTP/1.1 connections, JSON, Vert.x's HTTP client; gRPC: one HTTP/2 connection, raw contents, with "
                + "grpc-java (%d channel(s)), with Vert.x's gRPC client (the same Vert.x as the REST client), and with "
                + "Vert.x's HTTP/2 client sending each call's gRPC frame prepared beforehand and checking grpc-status "
                + "(canned: the REST generator's way, prepared bodies, no per-call encoding). "
                + "Latency in ms. CPU per request at 8 in flight: the process's user + system time over the run "
                + "divided by the requests answered, for the server and for the load generator, which shares the "
                + "machine's cores (its cost is part of every rate).%n%n", Instant.now(), MachineUsage.loadAverage(),
                measure.toSeconds(), rounds, measure.toSeconds(), channels));
        md.append("| workload | round | protocol (client) | p50 (1) | rate (8) | rate / REST | p50 (8) | server µs/req |"
                + " generator µs/req |\n| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1));
        GrpcClient vertxClient = GrpcClient.client(vertx);
        try (LoadGenerator generator = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(settings, out.resolve("serval.log"))) {
            System.out.printf("Serval ready on port %d%n", serval.port());
            SocketAddress server = SocketAddress.inetSocketAddress(serval.port(), "127.0.0.1");
            // Callbacks on the channel's own event loop (no hand-off to an executor), as a load generator should.
            List<ManagedChannel> channel = new ArrayList<>();
            for (int i = 0; i < channels; i++) {
                channel.add(ManagedChannelBuilder.forAddress("127.0.0.1", serval.port()).usePlaintext()
                        .directExecutor().build());
            }
            Client grpcJava = grpcJava(channel);
            Client vertxGrpc = vertxGrpc(vertxClient, server);
            io.vertx.core.http.HttpClient http2 = vertx.createHttpClient(new HttpClientOptions()
                    .setProtocolVersion(HttpVersion.HTTP_2).setHttp2ClearTextUpgrade(false).setDefaultHost("127.0.0.1")
                    .setDefaultPort(serval.port()).setTcpNoDelay(true), new PoolOptions().setHttp2MaxSize(1));
            try {
                for (int round = 1; round <= rounds; round++) {
                    for (String workload : List.of("noop", "MiniLM")) {
                        Workload rest = workload.equals("noop") ? Workload.noop("echo")
                                : Workload.texts("minilm", "all-minilm-l6-v2", texts);
                        List<ModelInferRequest> calls = workload.equals("noop") ? List.of(noop())
                                : texts.stream().map(GrpcBenchmark::text).toList();
                        Client canned = cannedHttp2(http2, framed(calls));
                        long pid = serval.pid();
                        generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), pid, rest, 8, Duration.ZERO,
                                WARM_UP, DRAIN);
                        RunResult restOne = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), pid, rest, 1,
                                Duration.ofSeconds(1), measure, DRAIN);
                        Profiler profiler = profile ? Profiler.of(pid, out) : null;
                        RunResult restEight = profiled(profiler, "rest-" + workload + "-" + round, () -> generator
                                .closedLoop(LoadBenchmark.SERVAL, serval.port(), pid, rest, 8, Duration.ofSeconds(1),
                                        measure, DRAIN));
                        Figures restFigures = Figures.of(restEight);

                        closedLoop(grpcJava, calls, 8, WARM_UP, Duration.ZERO, pid);
                        Figures grpcOne = closedLoop(grpcJava, calls, 1, Duration.ofSeconds(1), measure, pid);
                        Figures grpcEight = profiled(profiler, "grpc-" + workload + "-" + round,
                                () -> closedLoop(grpcJava, calls, 8, Duration.ofSeconds(1), measure, pid));

                        closedLoop(vertxGrpc, calls, 8, WARM_UP, Duration.ZERO, pid);
                        Figures vertxOne = closedLoop(vertxGrpc, calls, 1, Duration.ofSeconds(1), measure, pid);
                        Figures vertxEight = profiled(profiler, "grpc-vertx-" + workload + "-" + round,
                                () -> closedLoop(vertxGrpc, calls, 8, Duration.ofSeconds(1), measure, pid));

                        closedLoop(canned, calls, 8, WARM_UP, Duration.ZERO, pid);
                        Figures cannedOne = closedLoop(canned, calls, 1, Duration.ofSeconds(1), measure, pid);
                        Figures cannedEight = profiled(profiler, "grpc-canned-" + workload + "-" + round,
                                () -> closedLoop(canned, calls, 8, Duration.ofSeconds(1), measure, pid));

                        System.out.printf("  round %d %-6s REST 8: %.0f/s p50 %.3f | gRPC (grpc-java) 8: %.0f/s p50 "
                                + "%.3f | gRPC (Vert.x) 8: %.0f/s p50 %.3f | gRPC (canned) 8: %.0f/s p50 %.3f | "
                                + "errors %d / %d / %d / %d%n", round, workload,
                                restFigures.throughput(), restFigures.p50(), grpcEight.throughput(), grpcEight.p50(),
                                vertxEight.throughput(), vertxEight.p50(), cannedEight.throughput(), cannedEight.p50(),
                                restFigures.errors(), grpcEight.errors(), vertxEight.errors(), cannedEight.errors());
                        row(md, workload, round, "REST (Vert.x)", restOne.p50(), restFigures, restFigures);
                        row(md, workload, round, "gRPC (grpc-java)", grpcOne.p50(), grpcEight, restFigures);
                        row(md, workload, round, "gRPC (Vert.x)", vertxOne.p50(), vertxEight, restFigures);
                        row(md, workload, round, "gRPC (Vert.x HTTP/2, canned)", cannedOne.p50(), cannedEight,
                                restFigures);
                    }
                }
            } finally {
                for (ManagedChannel open : channel) {
                    open.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        }
        Files.writeString(out.resolve("summary.md"), md.toString());
        System.out.println();
        System.out.println(md);
        System.out.println("Wrote " + out.resolve("summary.md"));
    }

    private static List<String> arguments(String[] args) {
        return Arrays.asList(args);
    }

    static ModelInferRequest noop() {
        ByteBuffer raw = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putFloat(1).putFloat(2).putFloat(3)
                .putFloat(4);
        return ModelInferRequest.newBuilder().setModelName("echo").addInputs(ModelInferRequest.InferInputTensor
                .newBuilder().setName("x").setDatatype("FP32").addShape(1).addShape(4))
                .addRawInputContents(ByteString.copyFrom(raw.array())).build();
    }

    static ModelInferRequest text(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        ByteBuffer raw = ByteBuffer.allocate(4 + bytes.length).order(ByteOrder.LITTLE_ENDIAN).putInt(bytes.length)
                .put(bytes);
        return ModelInferRequest.newBuilder().setModelName("all-minilm-l6-v2").addInputs(ModelInferRequest
                .InferInputTensor.newBuilder().setName("text").setDatatype("BYTES").addShape(1))
                .addRawInputContents(ByteString.copyFrom(raw.array())).build();
    }

    /** One gRPC client: sends {@code request} and calls {@code done} (on any thread) with whether it was answered. */
    interface Client {
        void call(int lane, ModelInferRequest request, Consumer<Boolean> done);
    }

    /** grpc-java over {@code channels} (lanes spread over them), callbacks on the channels' event loops. */
    static Client grpcJava(List<ManagedChannel> channels) {
        List<GRPCInferenceServiceGrpc.GRPCInferenceServiceStub> stubs = channels.stream()
                .map(GRPCInferenceServiceGrpc::newStub).toList();
        return (lane, request, done) -> stubs.get(lane % stubs.size()).modelInfer(request, new StreamObserver<>() {
            @Override
            public void onNext(ModelInferResponse response) {
            }

            @Override
            public void onError(Throwable failure) {
                done.accept(false);
            }

            @Override
            public void onCompleted() {
                done.accept(true);
            }
        });
    }

    /** {@code ModelInfer} for the Vert.x gRPC client, with the messages generated from platform-api's proto. */
    private static final ServiceMethod<ModelInferResponse, ModelInferRequest> MODEL_INFER = ServiceMethod.client(
            ServiceName.create("inference.GRPCInferenceService"), "ModelInfer", GrpcMessageEncoder.encoder(),
            GrpcMessageDecoder.decoder(ModelInferResponse.parser()));

    /** Vert.x's gRPC client (one HTTP/2 connection to {@code server}, on its Vert.x's event loop). */
    static Client vertxGrpc(GrpcClient client, SocketAddress server) {
        return (lane, request, done) -> client.request(server, MODEL_INFER).compose(call -> {
            call.end(request);
            return call.response().compose(GrpcClientResponse::last);
        }).onComplete(answer -> done.accept(answer.succeeded()));
    }

    /**
     * gRPC driven as the load generator drives REST: Vert.x's HTTP client (HTTP/2 with prior knowledge, one
     * connection, on {@code vertx}'s event loop), each request's gRPC frame built once beforehand
     * ({@code framed}), the answer's body read and its {@code grpc-status} trailer checked, with no protobuf work per
     * call. The REST generator sends prepared JSON bodies and reads the answers the same way, so the two protocols are
     * compared with clients doing the same work.
     */
    static Client cannedHttp2(io.vertx.core.http.HttpClient client, java.util.Map<ModelInferRequest, Buffer> framed) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setURI("/inference.GRPCInferenceService/ModelInfer")
                .putHeader(HttpHeaders.CONTENT_TYPE, "application/grpc").putHeader("te", "trailers");
        return (lane, request, done) -> client.request(options)
                .compose(call -> call.send(framed.get(request)))
                .compose(response -> response.body().map(body -> response.statusCode() == 200
                        && "0".equals(response.getTrailer("grpc-status"))))
                .onComplete(answer -> done.accept(answer.succeeded() && answer.result()));
    }

    /** Each of {@code requests} as a gRPC frame: no compression, its length, its bytes. */
    static java.util.Map<ModelInferRequest, Buffer> framed(List<ModelInferRequest> requests) {
        java.util.Map<ModelInferRequest, Buffer> framed = new java.util.IdentityHashMap<>();
        for (ModelInferRequest request : requests) {
            byte[] bytes = request.toByteArray();
            framed.put(request, Buffer.buffer(5 + bytes.length).appendByte((byte) 0).appendInt(bytes.length)
                    .appendBytes(bytes));
        }
        return framed;
    }

    /**
     * {@code inFlight} calls through {@code client}, each sending the next request of {@code requests} (cycling) as
     * soon as the previous one is answered, for {@code warmUp} then {@code measure}; answers that end inside the
     * measured window are recorded.
     */
    static Figures closedLoop(Client client, List<ModelInferRequest> requests, int inFlight, Duration warmUp,
            Duration measure, long serverPid) throws InterruptedException {
        MachineUsage.Sample before = MachineUsage.sample(serverPid);
        long from = System.nanoTime() + warmUp.toNanos();
        Loop loop = new Loop(client, requests, from, from + measure.toNanos(), new Recorder(3), new AtomicLong(),
                new AtomicLong(), new AtomicLong(), new CountDownLatch(inFlight));
        for (int lane = 0; lane < inFlight; lane++) {
            loop.send(lane);
        }
        if (!loop.lanes.await(warmUp.plus(measure).plus(DRAIN).toMillis(), TimeUnit.MILLISECONDS)) {
            System.err.println("  some gRPC calls were still unanswered after the drain");
        }
        Histogram histogram = loop.latencies.getIntervalHistogram();
        double seconds = Math.max(measure.toNanos(), 1) / 1e9;
        return new Figures(loop.answered.get() / seconds, histogram.getValueAtPercentile(50) / 1e6,
                histogram.getValueAtPercentile(99) / 1e6, loop.errors.get(),
                MachineUsage.sample(serverPid).sharesSince(before));
    }

    /** A closed loop's shared state: each lane has one call in flight, the next sent from the previous one's end. */
    private record Loop(Client client, List<ModelInferRequest> requests, long from, long to, Recorder latencies,
            AtomicLong next, AtomicLong answered, AtomicLong errors, CountDownLatch lanes) {

        void send(int lane) {
            long start = System.nanoTime();
            if (start >= to) {
                lanes.countDown();
                return;
            }
            ModelInferRequest request = requests.get((int) (next.getAndIncrement() % requests.size()));
            client.call(lane, request, answered -> {
                long end = System.nanoTime();
                if (!answered) {
                    errors.incrementAndGet();
                } else if (start >= from && end <= to) {
                    latencies.recordValue(end - start);
                    this.answered.incrementAndGet();
                }
                send(lane);
            });
        }
    }
}
