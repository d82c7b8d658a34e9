package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The rerank benchmark (issue 40): Serval serving a cross-encoder of MiniLM-L6's shape (random weights, the cost of
 * {@code cross-encoder/ms-marco-MiniLM-L-6-v2}, written by {@code scripts/make_tiny_cross_encoder.py --minilm} into a
 * repository under the output folder, from a venv of onnx and numpy that it makes the first time) through the
 * Jina/Cohere route {@code POST /v2/rerank}, against the raw loop of the same model over the same pairs
 * ({@link RerankRawLoop}: the predictors of {@code TextModels.rerank}, pair tokenisation with the same
 * {@code tokenizer.json}, batches grouped by token length as Serval's, at the best of {@code --raw-batches}) in the same
 * run. Requests are {@link RerankWorkload}'s: a short query with 20 to 100 documents of 3 to 100 words.
 *
 * <p>Serval runs its deployment {@code reranker} as shipped (2 predictor threads of 1 intra-op thread, batches up to
 * 32 pairs, or one at a time when its load-time probe finds that batching does not pay on this CPU: the report
 * gives its decision); the raw loop runs the same split. After a pre-warm, each of {@code --rounds} rounds measures the raw loop,
 * then Serval in closed loops at each of {@code --connections}, and the raw loop after the last round again, so that
 * every round's Serval figures have a raw measurement just before and just after them. Serval's pairs/s is its own
 * count of the documents of the rerank requests it answered ({@code serval_inputs_total{api="rerank"}}), read every
 * half second through the closed loop's measurement window and taken between the first and the last answer in it:
 * requests take a second or more each, so counting the requests that end inside a window would move the figure by a
 * whole request's documents at each edge. Latency is per request, from the load generator. The
 * goal ({@link RerankGoals}): Serval's pairs/s &ge; 0.9 &times; the raw loop's. Infinity, the other server the issue
 * names, is not installed here, so it has no row.
 *
 * <p>Output: {@code platform-bench/target/rerank/summary.md} and {@code report.json} (or {@code --out DIR}). About
 * 7 minutes on two cores ({@code --quick}: 1 round of shorter windows, about 2.5 minutes); from the repository root:
 * <pre>{@code
 * bin/loadbench --rerank [--quick] [--rounds 2] [--connections 1,8] [--measure 20s] [--raw-batches 1,8,32]
 *     [--max-length 512] [--python python3] [--python-dir DIR] [--out DIR] [--serval-opt -Dkey=value]...
 * }</pre>
 */
public final class RerankBenchmark {

    static final String DEPLOYMENT = "reranker";
    private static final String USAGE = "usage: bin/loadbench --rerank [--quick] [--rounds 2] [--connections 1,8] "
            + "[--measure 20s] [--pre-warm 30s] [--raw-batches 1,8,32] [--max-length 512] [--python python3] "
            + "[--python-dir DIR] [--out DIR] [--serval-opt -Dkey=value]...";
    /** The model generator's requirements: pinned, so that the model a figure names is reproducible. */
    static final List<String> GENERATOR_REQUIREMENTS = List.of("onnx==1.20.1", "numpy==" + PythonRawLoop.NUMPY);
    private static final Path GENERATOR = Path.of("scripts", "make_tiny_cross_encoder.py");
    private static final Duration GENERATOR_TIMEOUT = Duration.ofMinutes(5);
    private static final Duration DRAIN = Duration.ofSeconds(30);
    private static final Duration WARM_UP = Duration.ofSeconds(3);
    /**
     * How often Serval's input counter is read during a window: a fraction of the time between two answers (a second
     * or more), and a scrape (about 90 KB of text) that often costs the server well under 1 % of a core.
     */
    private static final Duration SAMPLE_EVERY = Duration.ofMillis(500);
    /** Serval's split, as shipped: predictor threads x intra-op threads. */
    private static final int WORKERS = 2;
    private static final int INTRA_OP = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    private RerankBenchmark() {
    }

    /** One raw-loop measurement: when it was taken (before round N, after the last) and at which batch size. */
    record RawPoint(String when, int batch, double pairsPerSecond, double cpuMicrosPerPair) {
    }

    /** One closed loop on Serval: the generator's figures and Serval's count of pairs over the same window. */
    record ServalPoint(int round, int connections, double pairsPerSecond, double serverCpuMicrosPerPair,
            RunResult run) {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of("--quick"), Set.of("--rounds", "--connections", "--measure", "--pre-warm",
                "--raw-batches", "--max-length", "--python", "--python-dir", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        boolean quick = arguments.contains("--quick");
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", quick ? "1" : "2"));
        List<Integer> connections = Options.ints(arguments, "--connections", List.of(1, 8));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(quick ? 10 : 20));
        Duration preWarm = Options.duration(arguments, "--pre-warm", Duration.ofSeconds(quick ? 10 : 30));
        List<Integer> rawBatches = Options.ints(arguments, "--raw-batches", List.of(1, 8, 32));
        int maxLength = Integer.parseInt(Options.value(arguments, "--max-length", "512"));
        String python = Options.value(arguments, "--python", "python3");
        Path pythonDir = Path.of(Options.value(arguments, "--python-dir", "platform-bench/target/python"));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/rerank"));
        if (rounds < 1 || connections.isEmpty() || connections.stream().anyMatch(c -> c < 1) || rawBatches.isEmpty()
                || rawBatches.stream().anyMatch(b -> b < 1) || maxLength < 16 || maxLength > 512) {
            System.err.println(USAGE + "\n  rounds >= 1, connections and raw batches >= 1, 16 <= max-length <= 512");
            System.exit(2);
        }
        Files.createDirectories(out);
        Path version = generateModel(python, pythonDir, out.resolve("repository"), maxLength);
        run(out, version, rounds, connections, measure, preWarm, rawBatches, maxLength, Options.servalOptions(args));
    }

    /**
     * The MiniLM-shaped cross-encoder in {@code repository/reranker/1}, written by the generator script unless it is
     * there already (the script's weights come from fixed seeds: the same files every time), its descriptor's
     * {@code max_length} set to {@code maxLength}. The tokenizer is all-MiniLM-L6-v2's (BERT uncased, 30522 entries)
     * from the class path.
     */
    static Path generateModel(String python, Path pythonDir, Path repository, int maxLength)
            throws IOException, InterruptedException {
        Path version = repository.resolve(DEPLOYMENT).resolve("1").toAbsolutePath();
        if (!Files.isRegularFile(version.resolve("model.onnx")) || !Files.isRegularFile(version.resolve("config.json"))) {
            PythonRawLoop.Venv venv = PythonRawLoop.prepare(python, pythonDir, "cross-encoder generator",
                    "cross-encoder-generator", GENERATOR_REQUIREMENTS);
            if (!venv.ready()) {
                throw new IllegalStateException("cannot make the model generator's venv: " + venv.failure());
            }
            Path tokenizer = RawEmbeddingLoop.modelFile(RawEmbeddingLoop.TOKENIZER);
            System.out.println("Writing the MiniLM-shaped cross-encoder to " + version + " ...");
            Process generator = new ProcessBuilder(venv.python().toString(), GENERATOR.toString(), "--minilm",
                    tokenizer.toString(), version.toString()).inheritIO().start();
            if (!generator.waitFor(GENERATOR_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                generator.destroyForcibly();
                throw new IllegalStateException(GENERATOR + " did not finish within " + GENERATOR_TIMEOUT);
            }
            if (generator.exitValue() != 0) {
                throw new IllegalStateException(GENERATOR + " failed with exit status " + generator.exitValue());
            }
        }
        // The script's descriptor (kind: text-rerank, max_length: 512), with the run's max_length.
        Path descriptor = version.resolve("model.yaml");
        Files.writeString(descriptor, Files.readString(descriptor).replaceAll("(?m)^max_length:.*$",
                "max_length: " + maxLength));
        return version;
    }

    private static void run(Path out, Path version, int rounds, List<Integer> connections, Duration measure,
            Duration preWarm, List<Integer> rawBatches, int maxLength, List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        List<RerankWorkload.Query> queries = RerankWorkload.queries(RerankWorkload.QUERIES, RerankWorkload.SEED);
        Workload workload = RerankWorkload.workload("rerank", DEPLOYMENT, queries);
        List<String> settings = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.repository.path=" + version.getParent().getParent(),
                "-Dserval.deployments." + DEPLOYMENT + ".model=" + DEPLOYMENT,
                // every request is scored by the model, whether or not a later Serval caches rerank results
                "-Dserval.deployments." + DEPLOYMENT + ".cache=off",
                // the properties' own MiniLM deployment stays (it is the properties' own); its one replica idles
                "-Dserval.deployments.all-minilm-l6-v2.predictor-threads=1"));
        settings.addAll(servalOptions);
        System.out.printf("Rerank benchmark: %d queries, %.1f documents each on average (%d pairs), load average %s%n",
                queries.size(), RerankWorkload.meanDocuments(queries), RerankWorkload.pairs(queries).size(),
                loadBefore);

        List<RawPoint> raw = new ArrayList<>();
        List<ServalPoint> serval = new ArrayList<>();
        List<RerankGoals.Round> goalRounds = new ArrayList<>();
        Map<String, Object> rawVersions;
        Map<String, Object> batching;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        try (ChildProcess loop = ChildProcess.startJvm(RerankRawLoop.class, List.of(version.toString(),
                Integer.toString(maxLength)));
                LoadGenerator generator = new LoadGenerator()) {
            rawVersions = JSON.readValue(loop.awaitLine(RerankRawLoop.READY, Duration.ofMinutes(3)), Map.class);
            System.out.println("Raw loop ready: " + rawVersions);
            // The raw loop's own warm-up (JIT, ONNX Runtime's arenas) before anything is recorded.
            rawMeasure(loop, rawBatches.getLast(), preWarm.dividedBy(2), Duration.ofSeconds(1));
            try (ServalProcess server = ServalProcess.start(settings, out.resolve("serval.log"))) {
                System.out.printf("Serval ready on port %d; pre-warm %d s%n", server.port(), preWarm.toSeconds());
                generator.closedLoop(LoadBenchmark.SERVAL, server.port(), server.pid(), workload,
                        connections.getLast(), Duration.ZERO, preWarm, DRAIN);
                batching = batching(http, server.uri("/api/status"));
                System.out.println("Serval's batching of " + DEPLOYMENT + ": " + batching);
                RawPoint before = rawBest(loop, "before round 1", rawBatches, measure, raw);
                for (int round = 1; round <= rounds; round++) {
                    ServalPoint best = null;
                    for (int count : connections) {
                        ServalPoint point = servalRun(generator, http, server, workload, round, count, measure);
                        serval.add(point);
                        if (best == null || point.pairsPerSecond() > best.pairsPerSecond()) {
                            best = point;
                        }
                    }
                    RawPoint after = rawBest(loop, round == rounds ? "after round " + round
                            : "after round " + round + ", before round " + (round + 1), rawBatches, measure, raw);
                    RawPoint limit = after.pairsPerSecond() >= before.pairsPerSecond() ? after : before;
                    goalRounds.add(new RerankGoals.Round(round, best.pairsPerSecond(), best.connections(),
                            before.pairsPerSecond(), after.pairsPerSecond(), best.serverCpuMicrosPerPair(),
                            limit.cpuMicrosPerPair()));
                    before = after;
                }
            }
            loop.send("quit");
        }
        RerankGoals.Verdict verdict = RerankGoals.evaluate(goalRounds);
        long seconds = Math.round((System.nanoTime() - startedNanos) / 1e9);

        Map<String, Object> settingsReport = new LinkedHashMap<>();
        settingsReport.put("queries", queries.size());
        settingsReport.put("meanDocuments", RerankWorkload.meanDocuments(queries));
        settingsReport.put("documentsPerQuery", List.of(RerankWorkload.MIN_DOCUMENTS, RerankWorkload.MAX_DOCUMENTS));
        settingsReport.put("documentWords", List.of(RerankWorkload.MIN_DOCUMENT_WORDS,
                RerankWorkload.MAX_DOCUMENT_WORDS));
        settingsReport.put("queryWords", List.of(RerankWorkload.MIN_QUERY_WORDS, RerankWorkload.MAX_QUERY_WORDS));
        settingsReport.put("path", RerankWorkload.PATH);
        settingsReport.put("maxLength", maxLength);
        settingsReport.put("rounds", rounds);
        settingsReport.put("connections", connections);
        settingsReport.put("measureSeconds", measure.toSeconds());
        settingsReport.put("preWarmSeconds", preWarm.toSeconds());
        settingsReport.put("rawBatches", rawBatches);
        settingsReport.put("split", WORKERS + " x " + INTRA_OP);
        settingsReport.put("servalSettings", settings);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-rerank");
        report.put("startedAt", started.toString());
        report.put("durationSeconds", seconds);
        report.put("commit", Options.commit());
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("settings", settingsReport);
        report.put("rawLoop", rawVersions);
        report.put("servalBatching", batching);
        report.put("raw", raw);
        report.put("serval", serval);
        report.put("goal", Map.of("minRatio", RerankGoals.MIN_RATIO, "rounds", goalRounds.stream()
                .map(r -> Map.of("round", r.round(), "servalPairsPerSecond", r.servalPairsPerSecond(),
                        "connections", r.connections(), "rawBefore", r.rawBefore(), "rawAfter", r.rawAfter(),
                        "limit", r.limit(), "ratio", r.ratio(), "servalCpuMicrosPerPair", r.servalCpu(),
                        "rawCpuMicrosPerPair", r.rawCpu(), "cpuRatio", r.cpuRatio())).toList(),
                "medianRatio", verdict.medianRatio(), "met", verdict.met()));
        report.put("infinity", "not available on this machine: no row");
        JSON.copy().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.resolve("report.json").toFile(), report);
        String summary = summary(started, seconds, loadBefore, settingsReport, rawVersions, batching, raw, serval,
                verdict);
        Files.writeString(out.resolve("summary.md"), summary);
        System.out.println();
        System.out.println(summary);
        System.out.println("Wrote " + out.resolve("summary.md") + " and report.json (" + seconds + " s)");
    }

    /** One closed loop at {@code connections}, with Serval's pair count read at the edges of its window. */
    private static ServalPoint servalRun(LoadGenerator generator, HttpClient http, ServalProcess server,
            Workload workload, int round, int connections, Duration measure) throws Exception {
        long from = System.nanoTime() + WARM_UP.toNanos();
        CompletableFuture<Double> pairs = pairsPerSecond(http, server.uri("/q/metrics"), from,
                from + measure.toNanos());
        Map<String, Double> before = ServalMetrics.scrape(server.uri("/q/metrics"), DEPLOYMENT);
        RunResult run = generator.closedLoop(LoadBenchmark.SERVAL, server.port(), server.pid(), workload,
                connections, WARM_UP, measure, DRAIN);
        run = run.withServerMetrics(ServalMetrics.between(before, ServalMetrics.scrape(server.uri("/q/metrics"),
                DEPLOYMENT)));
        double pairsPerSecond = pairs.get(1, TimeUnit.MINUTES);
        ServalPoint point = new ServalPoint(round, connections, pairsPerSecond,
                MachineUsage.microsPerRequest(run.cpu().server(), pairsPerSecond), run);
        System.out.printf(Locale.ROOT, "  round %d, %2d connections: %7.1f pairs/s  %5.2f req/s  p50 %7.1f ms  "
                + "p99 %7.1f ms  errors %s%n", round, connections, pairsPerSecond, run.throughput(), run.p50(),
                run.p99(), run.errors());
        return point;
    }

    /**
     * Serval's pairs/s between {@code from} and {@code end} (nanoTime), from its rerank input counter read every
     * {@link #SAMPLE_EVERY}: each growth is the documents of the requests answered since the previous read, counted
     * at the middle of that read, and the rate is taken between the first and the last growth inside the window
     * ({@link WindowCount}, as the raw loop counts its batches), so that where the window's edges cut a request of
     * many documents does not move it. On a thread of its own, since the closed loop blocks its caller meanwhile.
     */
    private static CompletableFuture<Double> pairsPerSecond(HttpClient http, URI metrics, long from, long end) {
        CompletableFuture<Double> result = new CompletableFuture<>();
        Thread.ofPlatform().name("rerank-pairs").daemon().start(() -> {
            try {
                WindowCount count = new WindowCount(from, end);
                // A benchmark's clock: the counter is read from the window's start to its end.
                Thread.sleep(Duration.ofNanos(Math.max(0, from - System.nanoTime())));
                double previous = rerankInputs(http, metrics);
                for (long next = from + SAMPLE_EVERY.toNanos(); next < end + SAMPLE_EVERY.toNanos();
                        next += SAMPLE_EVERY.toNanos()) {
                    Thread.sleep(Duration.ofNanos(Math.max(0, next - System.nanoTime()))); // the next sample's time
                    long before = System.nanoTime();
                    double inputs = rerankInputs(http, metrics);
                    if (inputs > previous) {
                        count.ended((before + System.nanoTime()) / 2, (int) (inputs - previous));
                        previous = inputs;
                    }
                }
                result.complete(count.textsPerSecond());
            } catch (Exception e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** The {@code batching} entry of {@link #DEPLOYMENT} in {@code GET /api/status}; empty when it has none. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> batching(HttpClient http, URI status) throws IOException, InterruptedException {
        Map<String, Object> body = JSON.readValue(http.send(HttpRequest.newBuilder(status)
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body(), Map.class);
        for (Map<String, Object> deployment : (List<Map<String, Object>>) body.getOrDefault("deployments", List.of())) {
            if (DEPLOYMENT.equals(deployment.get("name")) && deployment.get("batching") instanceof Map<?, ?> found) {
                return (Map<String, Object>) found;
            }
        }
        return Map.of();
    }

    /** {@code serval_inputs_total} of the rerank API for {@link #DEPLOYMENT}: documents of answered requests. */
    static double rerankInputs(HttpClient http, URI metrics) throws IOException, InterruptedException {
        String body = http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return rerankInputs(body);
    }

    /** The rerank input count in a Prometheus text {@code body}; 0 before the first rerank request counted. */
    static double rerankInputs(String body) {
        double sum = 0;
        for (String line : body.split("\n")) {
            int space = line.lastIndexOf(' ');
            if (line.startsWith("serval_inputs_total{") && line.contains("api=\"rerank\"")
                    && line.contains("deployment=\"" + DEPLOYMENT + "\"") && space > 0) {
                sum += Double.parseDouble(line.substring(space + 1));
            }
        }
        return sum;
    }

    /** The raw loop at each batch size, recorded under {@code when}; returns the point of the best pairs/s. */
    private static RawPoint rawBest(ChildProcess loop, String when, List<Integer> batches, Duration measure,
            List<RawPoint> raw) throws Exception {
        RawPoint best = null;
        for (int batch : batches) {
            Map<String, Object> result = rawMeasure(loop, batch, WARM_UP, measure);
            RawPoint point = new RawPoint(when, batch, ((Number) result.get("pairsPerSecond")).doubleValue(),
                    ((Number) result.get("cpuMicrosPerPair")).doubleValue());
            raw.add(point);
            System.out.printf(Locale.ROOT, "  raw loop %s, batch %2d: %7.1f pairs/s%n", when, batch,
                    point.pairsPerSecond());
            if (best == null || point.pairsPerSecond() > best.pairsPerSecond()) {
                best = point;
            }
        }
        return best;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> rawMeasure(ChildProcess loop, int batch, Duration warmUp, Duration measure)
            throws Exception {
        loop.send(String.format(Locale.ROOT, "measure %d %d %d %d %d", batch, warmUp.toMillis(), measure.toMillis(),
                WORKERS, INTRA_OP));
        return JSON.readValue(loop.awaitLine(RerankRawLoop.RESULT, warmUp.plus(measure).plusMinutes(2)), Map.class);
    }

    private static String summary(Instant started, long seconds, String loadBefore, Map<String, Object> settings,
            Map<String, Object> rawVersions, Map<String, Object> batching, List<RawPoint> raw,
            List<ServalPoint> serval, RerankGoals.Verdict verdict) {
        StringBuilder md = new StringBuilder("# Rerank: Serval against the raw loop\n\n");
        md.append(String.format(Locale.ROOT, "Run %s, %d s, load average before %s (%d cores, shared with other "
                + "work: figures from one stretch of a noisy machine). The cross-encoder: MiniLM-L6's shape with "
                + "random weights (`scripts/make_tiny_cross_encoder.py --minilm`: BERT, 6 layers, hidden 384; the "
                + "cost of cross-encoder/ms-marco-MiniLM-L-6-v2), `max_length` %s, deployment `%s` as shipped "
                + "(2 predictor threads x 1 intra-op thread, batches up to 32 pairs). Requests: `POST %s`, %s queries "
                + "of %s words, each with %s documents (mean %.1f) of %s words; closed loops at %s connections, "
                + "%s s each after %d s unrecorded, %s round(s). Serval's pairs/s is its own count of the documents "
                + "it answered (`serval_inputs_total{api=\"rerank\"}`, read every half second, from the first to "
                + "the last answer in the window); latency is per request.%n%n",
                started, seconds, loadBefore, Runtime.getRuntime().availableProcessors(), settings.get("maxLength"),
                DEPLOYMENT, settings.get("path"), settings.get("queries"), range(settings.get("queryWords")),
                range(settings.get("documentsPerQuery")), (Double) settings.get("meanDocuments"),
                range(settings.get("documentWords")), settings.get("connections"), settings.get("measureSeconds"),
                WARM_UP.toSeconds(), settings.get("rounds")));
        md.append(String.format(Locale.ROOT, "The limit: the same model through `TextModels.rerank` in a raw loop "
                + "(`RerankRawLoop`, a JVM of its own: ONNX Runtime %s, DJL %s), %s workers x intra-op threads as "
                + "Serval, the same pairs, batches of %s consecutive pairs grouped by token length as Serval's "
                + "predictors group them; the best batch size counts. Measured just before and just after each "
                + "round's Serval runs; the better of the two is the round's limit.%n%n",
                rawVersions.get("onnxruntime"), rawVersions.get("djl"), settings.get("split"), settings.get("rawBatches")));
        md.append(String.format(Locale.ROOT, "Serval's batching of `%s` (`GET /api/status`: decided when the model "
                + "loaded, by a probe of short texts on one predictor): mode %s, preferred batch %s (1: every pair "
                + "alone; 0: up to `max_batch_size`). %s%n%n", DEPLOYMENT, batching.get("mode"),
                batching.get("preferred_batch"), batching.get("reason")));
        md.append("## Goal\n\n| round | Serval pairs/s (connections) | raw before | raw after | limit | ratio | goal "
                + "| CPU µs/pair: Serval / raw |\n|---:|---:|---:|---:|---:|---:|---|---:|\n");
        for (RerankGoals.Round round : verdict.rounds()) {
            md.append(String.format(Locale.ROOT, "| %d | %.1f (%d) | %.1f | %.1f | %.1f | **%.3f** | ≥ %.2f | "
                    + "%.0f / %.0f = %.3f |%n", round.round(), round.servalPairsPerSecond(), round.connections(),
                    round.rawBefore(), round.rawAfter(), round.limit(), round.ratio(), RerankGoals.MIN_RATIO,
                    round.servalCpu(), round.rawCpu(), round.cpuRatio()));
        }
        md.append(String.format(Locale.ROOT, "%nMedian ratio over the rounds: **%.3f**: goal (≥ %.2f) %s.%n%n",
                verdict.medianRatio(), RerankGoals.MIN_RATIO, verdict.met() ? "**met**" : "**not met**"));
        md.append("The last column is reported without a goal: Serval's server process CPU per pair in the loop "
                + "of the goal over the raw loop's process CPU per pair in the measurement that is the limit. On a "
                + "machine shared with other work a process's pairs/s follows the CPU share the scheduler gives it "
                + "(a process with more runnable threads gets more), its CPU per pair much less.\n\n");
        md.append("Infinity (the issue's other comparison) is not installed on this machine and was not measured: "
                + "no row.\n\n");
        md.append("## Serval\n\n| round | connections | pairs/s | req/s | p50 ms | p90 ms | p99 ms | server µs/pair "
                + "| errors | mean batch | padding | inference ms |\n"
                + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (ServalPoint point : serval) {
            RunResult run = point.run();
            Map<String, Double> meters = run.serverMetrics();
            md.append(String.format(Locale.ROOT, "| %d | %d | %.1f | %.2f | %.1f | %.1f | %.1f | %.0f | %d | %.1f | "
                    + "%.2f | %.1f |%n", point.round(), point.connections(), point.pairsPerSecond(), run.throughput(),
                    run.p50(), run.p90(), run.p99(), point.serverCpuMicrosPerPair(), run.errorCount(),
                    meters.getOrDefault("meanBatchSize", Double.NaN), meters.getOrDefault("paddingShare", Double.NaN),
                    meters.getOrDefault("meanInferenceMillis", Double.NaN)));
        }
        md.append("\nMean batch, padding (share of padded tokens) and inference ms are Serval's own meters over the "
                + "whole closed loop, warm-up and drain included (`ServalMetrics`); a batch of one pair is not in the "
                + "mean batch.\n");
        md.append("\n## Raw loop\n\n| when | batch | pairs/s | process µs/pair |\n|---|---:|---:|---:|\n");
        for (RawPoint point : raw) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %.0f |%n", point.when(), point.batch(),
                    point.pairsPerSecond(), point.cpuMicrosPerPair()));
        }
        return md.toString();
    }

    private static String range(Object bounds) {
        List<?> list = (List<?>) bounds;
        return list.getFirst() + "-" + list.getLast();
    }
}
