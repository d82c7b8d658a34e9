package dev.serval.bench.load;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
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
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Serval's autoscaling ramp (issue 17): the MiniLM deployment autoscaled over open-loop load that steps up, down,
 * stops (the deployment scales to zero) and comes back (a cold start), sampled every half second: replicas desired
 * and running as the management API shows them, the served rate and latency per interval.
 *
 * <p>The packaged Serval ({@link ServalProcess}) runs {@code all-minilm-l6-v2} with one predictor thread of one
 * intra-op thread per replica (so that one replica uses one of the two cores), {@code lend_idle_cores} off, and
 * autoscaling with short delays so that the run takes minutes: {@code min_replicas 0}, {@code max_replicas} first 1,
 * {@code target_ongoing_requests 1} (one predictor thread per replica), {@code upscale_delay 2s}, {@code downscale_delay 8s},
 * {@code downscale_to_zero_delay 8s}, {@code look_back_period 2s}; the management API is opened
 * ({@code serval.api.auth-enabled=false}: loopback only). Then, from this JVM with {@link LoadGenerator} and one short
 * chat-like text per OIP request:
 *
 * <ol>
 *   <li>one replica's capacity: a closed loop of 4 connections while {@code max_replicas} is 1 (after an unrecorded
 *       warm-up), in texts/s; then {@code PATCH /api/deployments/all-minilm-l6-v2} sets {@code max_replicas} to the
 *       processors;</li>
 *   <li>the phases of {@link #PHASES}: open loops at multiples of that capacity, one after the other, and an idle
 *       phase with no load; every half second this thread reads what completed ({@link IntervalLog}) and
 *       {@code GET /api/deployments/all-minilm-l6-v2}.</li>
 * </ol>
 *
 * <p>Output in {@code platform-bench/target/autoscaling/} (or {@code --out DIR}): {@code report.json},
 * {@code summary.md} (settings, per-phase figures, the step response, the time to zero, the cold start, every sample)
 * and {@code replicas.png} (replicas and latency over time). About 4 minutes; run from the repository root:
 * <pre>{@code
 * bin/loadbench --autoscaling [--out DIR] [--serval-opt -Dkey=value]...
 * }</pre>
 */
public final class AutoscalingBenchmark {

    static final String DEPLOYMENT = LoadBenchmark.MINILM_DEPLOYMENT;
    private static final Duration SAMPLE = Duration.ofMillis(500);
    private static final Duration DRAIN = Duration.ofSeconds(5);
    /** How long a phase waits for its last answers (the next phase is shorter by what this takes). */
    private static final Duration PHASE_DRAIN = Duration.ofSeconds(3);
    /** The phases, in order: load as multiples of one replica's capacity. */
    static final List<RampTimeline.Phase> PHASES = List.of(
            new RampTimeline.Phase("low", 0.3, Duration.ofSeconds(20)),
            new RampTimeline.Phase("step up", 1.3, Duration.ofSeconds(40)),
            new RampTimeline.Phase("step down", 0.3, Duration.ofSeconds(30)),
            new RampTimeline.Phase("idle", 0, Duration.ofSeconds(25)),
            new RampTimeline.Phase("cold start", 0.002, Duration.ofSeconds(15)),
            new RampTimeline.Phase("low again", 0.3, Duration.ofSeconds(20)));
    /** The deployment's settings, as properties. */
    static final Map<String, String> AUTOSCALING = autoscalingSettings();

    private AutoscalingBenchmark() {
    }

    private static Map<String, String> autoscalingSettings() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("min-replicas", "0");
        settings.put("max-replicas", "1");
        settings.put("initial-replicas", "1");
        settings.put("target-ongoing-requests", "1"); // one predictor thread: busy at 1
        settings.put("upscale-delay", "2s");
        settings.put("downscale-delay", "8s");
        settings.put("downscale-to-zero-delay", "8s");
        settings.put("look-back-period", "2s");
        return settings;
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, "usage: bin/loadbench --autoscaling [--out DIR] [--serval-opt -Dkey=value]...", Set.of(),
                Set.of("--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/autoscaling"));
        Files.createDirectories(out);
        run(out, Options.servalOptions(args));
    }

    private static void run(Path out, List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        Map<String, Object> commit = Options.commit();
        int cores = Runtime.getRuntime().availableProcessors();
        List<String> arguments = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.deployments." + DEPLOYMENT + ".predictor-threads=1",
                "-Dserval.deployments." + DEPLOYMENT + ".intra-op-threads=1",
                "-Dserval.deployments." + DEPLOYMENT + ".lend-idle-cores=false",
                "-Dserval.deployments." + DEPLOYMENT + ".max-queued-requests=1024"));
        AUTOSCALING.forEach((key, value) -> arguments.add("-Dserval.deployments." + DEPLOYMENT + ".autoscaling." + key
                + "=" + value));
        arguments.addAll(servalOptions);
        System.out.printf("Serval autoscaling ramp: %d CPUs, load average %s, Java %s%n", cores, loadBefore,
                System.getProperty("java.version"));
        Workload workload = Workload.texts(LoadBenchmark.MINILM_SHORT, DEPLOYMENT,
                ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<RampTimeline.Row> rows = new ArrayList<>();
        Map<String, RunResult> phaseRuns = new LinkedHashMap<>();
        double capacity;
        try (LoadGenerator generator = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(arguments, out.resolve("serval.log"))) {
            System.out.printf("Serval ready on port %d (pid %d; log %s)%n", serval.port(), serval.pid(), serval.log());
            JsonNode first = deployment(http, serval);
            if (!first.path("config").has("autoscaling")) {
                throw new IllegalStateException("Serval did not take the autoscaling settings: " + first);
            }
            RunResult warm = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, 4,
                    Duration.ofMillis(100), Duration.ofSeconds(10), DRAIN);
            RunResult one = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), workload, 4,
                    Duration.ofSeconds(1), Duration.ofSeconds(8), DRAIN);
            capacity = one.throughput();
            System.out.printf("  one replica: %.1f texts/s (warm-up %.1f), p50 %.2f ms%n", capacity, warm.throughput(),
                    one.p50());
            patch(http, serval, "{\"autoscaling\":{\"max_replicas\":" + cores + "}}");

            IntervalLog intervals = new IntervalLog();
            Map<String, Double> offered = new ConcurrentHashMap<>();
            CompletableFuture<Void> phases = new CompletableFuture<>();
            long t0 = System.nanoTime();
            String[] current = {PHASES.getFirst().name()};
            Thread.ofPlatform().name("ramp-phases").daemon().start(() -> {
                try {
                    for (RampTimeline.Phase phase : PHASES) {
                        current[0] = phase.name();
                        long end = t0 + (long) (RampTimeline.start(PHASES, phase.name()) * 1e9)
                                + phase.duration().toNanos();
                        double rate = phase.multiple() * capacity;
                        offered.put(phase.name(), rate);
                        if (rate > 0) {
                            phaseRuns.put(phase.name(), generator.openLoop(LoadBenchmark.SERVAL, serval.port(),
                                    serval.pid(), workload, Math.max(rate, 0.3), 256, Duration.ZERO,
                                    Duration.ofNanos(end - System.nanoTime()), PHASE_DRAIN, intervals));
                        }
                        long left = end - System.nanoTime();
                        if (left > 0) {
                            Thread.sleep(Duration.ofNanos(left));
                        }
                    }
                    phases.complete(null);
                } catch (Exception | Error e) {
                    phases.completeExceptionally(e);
                }
            });
            long k = 0;
            while (!phases.isDone()) {
                long wait = t0 + ++k * SAMPLE.toNanos() - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(Duration.ofNanos(wait)); // the phases run on the generator's event loop
                }
                rows.add(sample((System.nanoTime() - t0) / 1e9, current[0], offered, intervals, deployment(http,
                        serval)));
                print(rows.getLast());
            }
            phases.get(5, TimeUnit.SECONDS);
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-autoscaling-ramp");
        report.put("mode", "ramp");
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", commit);
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("serval", Map.of("arguments", arguments, "deployment", DEPLOYMENT));
        report.put("phases", PHASES.stream().map(p -> Map.of("name", p.name(), "multiple", p.multiple(),
                "seconds", p.duration().toSeconds())).toList());
        report.put("oneReplicaTextsPerSecond", capacity);
        report.put("phaseRuns", phaseRuns);
        report.put("samples", rows);
        AutoscalingReport.write(out, report, capacity, cores, rows, phaseRuns);
        System.out.println("Report: " + out.resolve("summary.md") + " (" + Math.round((System.nanoTime()
                - startedNanos) / 1e9) + " s)");
    }

    private static RampTimeline.Row sample(double seconds, String phase, Map<String, Double> offered,
            IntervalLog intervals, JsonNode deployment) {
        IntervalLog.Interval interval = intervals.take();
        JsonNode replicas = deployment.path("replicas");
        JsonNode ongoing = deployment.path("autoscaling").path("ongoing_requests");
        return new RampTimeline.Row(seconds, phase, offered.getOrDefault(phase, 0.0),
                interval.successes() / (SAMPLE.toMillis() / 1000.0), interval.errors(), interval.p50(), interval.p99(),
                replicas.path("desired").asInt(), replicas.path("running").asInt(), replicas.path("starting").asInt(),
                deployment.path("state").asText(), ongoing.isNumber() ? ongoing.asDouble() : Double.NaN);
    }

    private static JsonNode deployment(HttpClient http, ServalProcess serval) throws IOException,
            InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(serval.uri("/api/deployments/" + DEPLOYMENT))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("GET /api/deployments/" + DEPLOYMENT + ": " + response.statusCode() + " "
                    + response.body());
        }
        return LoadReport.json().readTree(response.body());
    }

    private static void patch(HttpClient http, ServalProcess serval, String body) throws IOException,
            InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(serval.uri("/api/deployments/" + DEPLOYMENT))
                .method("PATCH", HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("PATCH " + body + ": " + response.statusCode() + " " + response.body());
        }
    }

    private static void print(RampTimeline.Row row) {
        System.out.printf("  %6.1f s %-10s offered %6.1f served %6.1f/s p50 %7.2f p99 %8.2f ms errors %s  replicas "
                        + "%d desired, %d running, %d starting (%s), ongoing %.2f%n", row.seconds(), row.phase(),
                row.offered(), row.served(), row.p50(), row.p99(), row.errors().isEmpty() ? "0" : row.errors(),
                row.desired(), row.running(), row.starting(), row.state(), row.ongoing());
    }
}
