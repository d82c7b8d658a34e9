package dev.serval.bench.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.serval.model.ModelFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.FileAlreadyExistsException;
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
import java.util.Random;
import java.util.Set;

/**
 * Model multiplexing under load (issue 18): Zipf-distributed traffic over N copies of MiniLM, served by one
 * multiplexed deployment that holds all of them, and by one that holds fewer (so the tail loads and unloads), against
 * the same traffic to N deployments of one model each, all loaded; and the latency of a request whose model no
 * replica holds (a cold load).
 *
 * <p>The repository ({@code OUT/repository}) holds {@code t-00} ... {@code t-NN}, each the bundled quantised MiniLM
 * (hard links to one copy of its files). Both servers run every model with one predictor thread of one intra-op
 * thread, {@code lend_idle_cores} off; the multiplexed ones as deployment {@code tenants} with {@code model: t-*},
 * one replica of at most K models for each K of {@code --per-replica} (default N, 3N/4, N/2). The traffic: one short chat-like text per OIP request to
 * {@code /v2/models/t-XX/infer}, the model drawn from a Zipf law of exponent {@code --zipf} (seeded: both servers get
 * the same sequence). For each server: an unrecorded closed-loop warm-up, a closed loop of 8 connections (saturation
 * throughput and latency), and an open loop at half of the separate deployments' saturation (the p99 a platform
 * sees below saturation). Then, on the server that holds fewer, {@code --cold} requests each to a model no replica holds
 * (one at a time), timed from the client, with the server's own {@code serval_multiplex_load_seconds}.
 *
 * <p>Output in {@code platform-bench/target/multiplex/} (or {@code --out DIR}): {@code summary.md} and
 * {@code report.json}. About 5 minutes; from the repository root:
 * <pre>{@code
 * bin/loadbench --multiplex [--models 8] [--per-replica 8,6,4] [--zipf 1.1] [--cold 5] [--out DIR]
 * }</pre>
 */
public final class MultiplexBenchmark {

    private static final String USAGE = "usage: bin/loadbench --multiplex [--models N] [--per-replica K,K...] [--zipf S] "
            + "[--cold N] [--measure 20s] [--out DIR] [--serval-opt -Dkey=value]...";
    private static final Duration WARM_UP = Duration.ofSeconds(15);
    private static final Duration DRAIN = Duration.ofSeconds(5);
    private static final int CONNECTIONS = 8;
    private static final String DEPLOYMENT = "tenants";
    private static final Duration COLD_PAUSE = Duration.ofSeconds(5);

    private MultiplexBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of(), Set.of("--models", "--per-replica", "--zipf", "--cold", "--measure",
                "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        int models = Integer.parseInt(Options.value(arguments, "--models", "8"));
        String perReplicaText = Options.value(arguments, "--per-replica", models + "," + (3 * models / 4) + ","
                + (models / 2));
        List<Integer> perReplica = Arrays.stream(perReplicaText.split(",")).map(String::trim)
                .map(Integer::parseInt).distinct().toList();
        double zipf = Double.parseDouble(Options.value(arguments, "--zipf", "1.1"));
        int cold = Integer.parseInt(Options.value(arguments, "--cold", "5"));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(20));
        if (models < 2 || models > 64 || perReplica.stream().anyMatch(k -> k < 1 || k > models) || cold < 0
                || zipf <= 0) {
            System.err.println(USAGE + "\n  2 <= models <= 64, 1 <= each per-replica <= models, cold >= 0, zipf > 0");
            System.exit(2);
        }
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/multiplex"));
        Files.createDirectories(out);
        run(out, models, perReplica, zipf, cold, measure, Options.servalOptions(args));
    }

    /** Model names {@code t-00} ... */
    static String model(int index) {
        return String.format(Locale.ROOT, "t-%02d", index);
    }

    /**
     * {@code length} model indices in {@code [0, models)} drawn from a Zipf law of exponent {@code s}
     * (P(k) proportional to 1 / (k+1)^s), seeded.
     */
    static int[] zipfSequence(int models, double s, int length, long seed) {
        double[] cumulative = new double[models];
        double sum = 0;
        for (int k = 0; k < models; k++) {
            sum += 1 / Math.pow(k + 1, s);
            cumulative[k] = sum;
        }
        Random random = new Random(seed);
        int[] sequence = new int[length];
        for (int i = 0; i < length; i++) {
            double u = random.nextDouble() * sum;
            int k = Arrays.binarySearch(cumulative, u);
            sequence[i] = Math.min(models - 1, k >= 0 ? k : -k - 1);
        }
        return sequence;
    }

    private static void run(Path out, int models, List<Integer> perReplica, double zipf, int cold, Duration measure,
            List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        Path repository = repository(out.resolve("repository"), models);
        int[] sequence = zipfSequence(models, zipf, 20_000, 42);
        List<String> paths = Arrays.stream(sequence).mapToObj(k -> "/v2/models/" + model(k) + "/infer").toList();
        Workload workload = Workload.texts("zipf", model(0), ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED))
                .spread("zipf-" + models, paths);
        long[] share = new long[models];
        for (int k : sequence) {
            share[k]++;
        }
        System.out.printf("Serval multiplexing: %d models (Zipf %.2f: the most popular %.1f %%, the least %.2f %%), "
                + "%s per replica; load average %s%n", models, zipf, 100.0 * share[0] / sequence.length,
                100.0 * share[models - 1] / sequence.length, perReplica, loadBefore);

        List<String> common = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.repository.path=" + repository.toAbsolutePath(),
                // the default MiniLM deployment stays (it is the properties' own); its one replica idles
                "-Dserval.deployments.all-minilm-l6-v2.predictor-threads=1"));
        common.addAll(servalOptions);

        List<String> separate = new ArrayList<>(common);
        for (int k = 0; k < models; k++) {
            separate.addAll(modelSettings("-Dserval.deployments." + model(k) + ".", model(k)));
        }
        List<String> multiplexed = new ArrayList<>(common);
        multiplexed.addAll(modelSettings("-Dserval.deployments." + DEPLOYMENT + ".", "t-*"));

        Map<String, Object> runs = new LinkedHashMap<>();
        Map<String, Object> multiplexMetrics = new LinkedHashMap<>();
        List<Double> coldMillis = new ArrayList<>();
        double rate;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        try (LoadGenerator generator = new LoadGenerator()) {
            RunResult separateClosed;
            try (ServalProcess serval = ServalProcess.start(separate, out.resolve("serval-separate.log"))) {
                System.out.printf("Separate deployments ready on port %d%n", serval.port());
                generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, CONNECTIONS,
                        Duration.ZERO, WARM_UP, DRAIN);
                separateClosed = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload,
                        CONNECTIONS, Duration.ofSeconds(1), measure, DRAIN);
                rate = separateClosed.throughput() / 2;
                RunResult separateOpen = generator.openLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(),
                        workload, rate, 256, Duration.ofSeconds(1), measure, DRAIN);
                runs.put("separate-closed", separateClosed);
                runs.put("separate-open", separateOpen);
                print("separate, closed", separateClosed);
                print("separate, open", separateOpen);
            }
            for (int held : perReplica) {
                String label = held == models ? "multiplexed-all" : "multiplexed-" + held;
                List<String> settings = new ArrayList<>(multiplexed);
                settings.add("-Dserval.deployments." + DEPLOYMENT + ".max-models-per-replica=" + held);
                try (ServalProcess serval = ServalProcess.start(settings, out.resolve("serval-" + label + ".log"))) {
                    System.out.printf("Multiplexed deployment, %d models per replica, ready on port %d%n", held,
                            serval.port());
                    generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, CONNECTIONS,
                            Duration.ZERO, WARM_UP, DRAIN);
                    Map<String, Double> before = multiplexSeries(http, serval.port());
                    RunResult closed = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(),
                            workload, CONNECTIONS, Duration.ofSeconds(1), measure, DRAIN);
                    RunResult open = generator.openLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload,
                            rate, 256, Duration.ofSeconds(1), measure, DRAIN);
                    Map<String, Double> after = multiplexSeries(http, serval.port());
                    runs.put(label + "-closed", closed);
                    runs.put(label + "-open", open);
                    print(label + ", closed", closed);
                    print(label + ", open", open);
                    String tag = "{deployment=\"" + DEPLOYMENT + "\"}";
                    for (String name : List.of("serval_multiplex_loads_total", "serval_multiplex_evictions_total")) {
                        multiplexMetrics.put(label + ": " + name + " during the measured runs",
                                after.getOrDefault(name + tag, 0.0) - before.getOrDefault(name + tag, 0.0));
                    }
                    if (held == models || held != perReplica.stream().mapToInt(Integer::intValue).min().orElse(held)) {
                        continue; // cold requests on the server that holds the fewest (every model may be loaded)
                    }
                    for (int i = 0; i < cold; i++) {
                        // Idle long enough for every loaded model's residency to end (10 x a load, at least 1 s): the
                        // request measures a load, not a wait for room.
                        Thread.sleep(COLD_PAUSE);
                        String unloaded = unloadedModel(http, serval.port(), models);
                        long begin = System.nanoTime();
                        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + serval.port() + "/v2/models/" + unloaded + "/infer"))
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(Workload.oipText("a cold start"))).build(),
                                HttpResponse.BodyHandlers.ofString());
                        double millis = (System.nanoTime() - begin) / 1e6;
                        if (answer.statusCode() != 200) {
                            throw new IllegalStateException("cold request to " + unloaded + ": HTTP "
                                    + answer.statusCode() + " " + answer.body());
                        }
                        coldMillis.add(millis);
                        System.out.printf("  cold request to %s: %.1f ms%n", unloaded, millis);
                    }
                    Map<String, Double> last = multiplexSeries(http, serval.port());
                    multiplexMetrics.put(label + ": serval_multiplex_load_seconds mean (all loads of the run), ms",
                            1000 * last.getOrDefault("serval_multiplex_load_seconds_sum" + tag, 0.0)
                                    / Math.max(1, last.getOrDefault("serval_multiplex_load_seconds_count" + tag, 0.0)));
                    multiplexMetrics.put(label + ": serval_multiplex_load_seconds max, ms",
                            1000 * last.getOrDefault("serval_multiplex_load_seconds_max" + tag, 0.0));
                }
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-multiplexing");
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", Options.commit());
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("settings", Map.of("models", models, "perReplica", perReplica, "zipf", zipf,
                "connections", CONNECTIONS, "openLoopRate", rate, "measureSeconds", measure.toSeconds()));
        report.put("requestShare", Arrays.stream(share).mapToObj(n -> (double) n / sequence.length).toList());
        report.put("runs", runs);
        report.put("multiplexMetrics", multiplexMetrics);
        report.put("coldRequestMillis", coldMillis);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.resolve("report.json").toFile(),
                report);
        Files.writeString(out.resolve("summary.md"), summary(models, perReplica, zipf, share, sequence.length, rate,
                runs, multiplexMetrics, coldMillis, measure));
        System.out.println("Report: " + out.resolve("summary.md") + " (" + Math.round((System.nanoTime()
                - startedNanos) / 1e9) + " s)");
    }

    /** The settings every model runs with, as properties under {@code prefix}. */
    private static List<String> modelSettings(String prefix, String model) {
        return List.of(prefix + "model=" + model, prefix + "predictor-threads=1", prefix + "intra-op-threads=1",
                prefix + "lend-idle-cores=false", prefix + "max-queued-requests=1024");
    }

    /** A repository of {@code models} copies of the bundled MiniLM ({@code t-00/1} ...), hard links where possible. */
    private static Path repository(Path root, int models) throws IOException {
        Path original = root.resolve("all-minilm-l6-v2").resolve("1");
        Files.createDirectories(original);
        ClassLoader loader = MultiplexBenchmark.class.getClassLoader();
        if (!Files.isRegularFile(original.resolve("model.onnx"))) {
            ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", original, "model.onnx");
            ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", original, "tokenizer.json");
        }
        String descriptor = "kind: text-embedding\nfile: model.onnx\ntokenizer: tokenizer.json\nmax_length: 256\n";
        Files.writeString(original.resolve("model.yaml"), descriptor);
        for (int k = 0; k < models; k++) {
            Path version = root.resolve(model(k)).resolve("1");
            Files.createDirectories(version);
            for (String file : List.of("model.onnx", "tokenizer.json")) {
                Path target = version.resolve(file);
                if (!Files.exists(target)) {
                    try {
                        Files.createLink(target, original.resolve(file));
                    } catch (IOException | UnsupportedOperationException e) {
                        if (!(e instanceof FileAlreadyExistsException)) {
                            Files.copy(original.resolve(file), target);
                        }
                    }
                }
            }
            Files.writeString(version.resolve("model.yaml"), descriptor);
        }
        return root;
    }

    /** Serval's {@code serval_multiplex_*} samples, by series with labels ({@code name{deployment="tenants"}}). */
    private static Map<String, Double> multiplexSeries(HttpClient http, int port) throws IOException,
            InterruptedException {
        String body = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Double> series = new LinkedHashMap<>();
        for (String line : body.split("\n")) {
            int space = line.lastIndexOf(' ');
            if (line.startsWith("serval_multiplex") && space > 0) {
                series.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
            }
        }
        return series;
    }

    /** A model of the repository that no replica of {@code tenants} holds now. */
    private static String unloadedModel(HttpClient http, int port, int models) throws IOException,
            InterruptedException {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/api/deployments/" + DEPLOYMENT)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode replicas = new ObjectMapper().readTree(answer.body()).path("multiplex").path("replicas");
        List<String> loaded = new ArrayList<>();
        replicas.forEach(replica -> replica.path("models").forEach(model -> loaded.add(model.asText())));
        for (int k = models - 1; k >= 0; k--) {
            if (!loaded.contains(model(k))) {
                return model(k);
            }
        }
        throw new IllegalStateException("every model is loaded: " + loaded);
    }

    private static void print(String what, RunResult run) {
        System.out.printf("  %-20s %7.1f texts/s  p50 %6.2f ms  p99 %7.2f ms  errors %s%n", what, run.throughput(),
                run.p50(), run.p99(), run.errors());
    }

    private static String summary(int models, List<Integer> perReplica, double zipf, long[] share, int length, double rate,
            Map<String, Object> runs, Map<String, Object> metrics, List<Double> cold, Duration measure) {
        StringBuilder md = new StringBuilder();
        md.append("# Model multiplexing under Zipf traffic\n\n");
        md.append(String.format(Locale.ROOT, "%d copies of the quantised MiniLM (`t-00` ... `t-%02d`), request shares "
                + "from a Zipf law of exponent %.2f (most popular %.1f %%, least %.2f %%). Every model runs 1 predictor "
                + "thread x 1 intra-op thread. **Separate**: %d deployments, all loaded. **Multiplexed**: one "
                + "deployment `model: t-*` of 1 replica holding all of them (`multiplexed-all`), or at most K of them "
                + "(`multiplexed-K`, K in %s: the tail loads and unloads). Closed loop: %d connections, %d s; "
                + "open loop: %.1f texts/s (half the separate deployments' saturation), %d s.%n%n", models, models - 1,
                zipf, 100.0 * share[0] / length, 100.0 * share[models - 1] / length, models, perReplica, CONNECTIONS,
                measure.toSeconds(), rate, measure.toSeconds()));
        md.append("| run | texts/s | p50 ms | p99 ms | errors |\n| --- | ---: | ---: | ---: | ---: |\n");
        runs.forEach((name, value) -> {
            RunResult run = (RunResult) value;
            md.append(String.format(Locale.ROOT, "| %s | %.1f | %.2f | %.2f | %d |%n", name, run.throughput(),
                    run.p50(), run.p99(), run.errors().values().stream().mapToLong(Long::longValue).sum()));
        });
        RunResult separate = (RunResult) runs.get("separate-closed");
        RunResult separateOpen = (RunResult) runs.get("separate-open");
        md.append("\n");
        for (String label : runs.keySet()) {
            if (!label.startsWith("multiplexed") || !label.endsWith("-closed")) {
                continue;
            }
            String config = label.substring(0, label.length() - "-closed".length());
            RunResult closed = (RunResult) runs.get(label);
            RunResult open = (RunResult) runs.get(config + "-open");
            md.append(String.format(Locale.ROOT, "- %s / separate: saturation throughput **%.2f**, open-loop p99 "
                    + "**%.2f** (%.2f ms vs %.2f ms)%n", config, closed.throughput() / separate.throughput(),
                    open.p99() / separateOpen.p99(), open.p99(), separateOpen.p99()));
        }
        md.append("\n");
        md.append("In a closed loop a connection whose model waits for room stops sending: with fewer models held "
                + "than asked for, the closed-loop figure measures that wait, not capacity. The open loop is the "
                + "traffic of independent clients.\n\n");
        md.append("Multiplexing meters:\n\n");
        metrics.forEach((name, value) -> md.append(String.format(Locale.ROOT, "- %s: %.1f%n", name,
                ((Number) value).doubleValue())));
        md.append(String.format(Locale.ROOT, "%nCold requests (each to a model no replica held, after %d s idle so "
                + "that no residency holds a slot; load + warm-up + inference, from the client): %s ms%n",
                COLD_PAUSE.toSeconds(), cold.stream().map(ms -> String.format(Locale.ROOT, "%.0f", ms)).toList()));
        return md.toString();
    }
}
