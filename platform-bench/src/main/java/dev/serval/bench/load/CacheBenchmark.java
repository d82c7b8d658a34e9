package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.buffer.Buffer;
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
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The result cache under load (issue 41): the default MiniLM deployment with its cache on (Serval as shipped) against
 * the same Serval with it off ({@code -Dserval.deployments.all-minilm-l6-v2.cache=off}), both started at once and
 * measured in alternation, so that each ratio comes from one stretch of time on this shared machine. One text per OIP
 * request ({@code /v2/models/all-minilm-l6-v2/infer}), two workloads:
 * <ul>
 *   <li>{@code zipf}: texts drawn with exponent 1.0 from 100,000 distinct Roblox-like chat lines ({@link GameChat}),
 *       a seeded sequence per round and connection count, the same for both servers, sent in its order
 *       ({@link LoadGenerator#closedLoopInOrder}). Before the rounds the cache-on server's cache is filled with
 *       {@code --fill} texts (default 100,000) of a Zipf stream of another seed, 32 to a request: the runs measure a
 *       cache that has seen that much of this traffic, not an empty one (under this law the texts of the first
 *       100,000 requests are those of 83 % of the next ones, of the first 20,000 about 70 %), and it goes on learning
 *       from the pre-warm and the runs;</li>
 *   <li>{@code unique}: lines from the same generator past the pool, each sent once in the whole run (every round
 *       and connection count has texts of its own; both servers get the same ones).</li>
 * </ul>
 * Each round runs both workloads on both servers (their order flipped every round) in closed loops of
 * {@code --connections} (saturation; default 64) and of 1 connection; then, on the cache-on server, a fully cached
 * text per request ({@code cached}: the 64 most popular lines, each sent once just before) and the no-op model
 * (deployment {@code noop}) at 1 connection. Around every run Serval's {@code serval_cache_requests_total} is scraped
 * ({@link ServalMetrics#cacheRequests}): hits, misses and coalesced lookups per run. The goals ({@link CacheGoals}):
 * Zipf at saturation &ge; 3 &times; cache off, unique &ge; 0.98 &times; cache off, a fully cached request's p50 within
 * 0.05 ms of the no-op model's.
 *
 * <p>Output in {@code platform-bench/target/cache/} (or {@code --out DIR}): {@code summary.md}, {@code report.json}
 * and the servers' logs. About 6 minutes on two cores ({@code --quick}: one round of 3 s runs, a 20,000-text
 * fill, about 2 minutes); from the repository root:
 * <pre>{@code
 * bin/loadbench --cache [--quick] [--rounds 2] [--connections 64] [--measure 10s] [--pre-warm 30s] [--fill 100000]
 *     [--out DIR]
 * }</pre>
 */
public final class CacheBenchmark {

    private static final String USAGE = "usage: bin/loadbench --cache [--quick] [--rounds 2] [--connections 64] "
            + "[--measure 10s] [--pre-warm 30s] [--fill 100000] [--out DIR] [--serval-opt -Dkey=value]...";
    static final String DEPLOYMENT = LoadBenchmark.MINILM_DEPLOYMENT;
    static final String NOOP_DEPLOYMENT = "noop";
    /** Distinct lines the Zipf workload draws from, and its exponent. */
    static final int POOL = 100_000;
    static final double EXPONENT = 1.0;
    static final String ZIPF = "zipf";
    static final String UNIQUE = "unique";
    static final String CACHED = "cached";
    static final String CACHE_ON = "cache-on";
    static final String CACHE_OFF = "cache-off";
    /**
     * The rates (requests/s) a run's requests are sized for: a Zipf sequence, and each unique run's texts, last this
     * many per second of warm-up and measurement; a run that went faster sent some twice, which the report says.
     */
    private static final int ZIPF_RATE_BOUND = 30_000;
    private static final int UNIQUE_RATE_BOUND = 8_000;
    /** The fully cached run's texts: the pool's most popular lines. */
    private static final int CACHED_TEXTS = 64;
    /** The cache fill's texts per request and requests in flight. */
    private static final int FILL_BATCH = 32;
    private static final int FILL_CONCURRENCY = 4;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WARM_UP = Duration.ofSeconds(1);
    private static final Duration DRAIN = Duration.ofSeconds(3);

    private CacheBenchmark() {
    }

    /** One measured run: which round, server and workload, the client's figures and the cache's lookups during it. */
    record Measured(int round, String server, String workload, int connections, int requestsPrepared, RunResult run,
            Map<String, Double> cache) {

        double lookups(String result) {
            return cache.getOrDefault(result, 0.0);
        }

        /** Whether the run may have sent some of its prepared requests twice (it went faster than sized for). */
        boolean wrapped(Duration measure) {
            return run.throughput() * (WARM_UP.plus(measure).toMillis() / 1e3) > requestsPrepared;
        }
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of("--quick"), Set.of("--rounds", "--connections", "--measure", "--pre-warm",
                "--fill", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        boolean quick = arguments.contains("--quick");
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", quick ? "1" : "2"));
        int connections = Integer.parseInt(Options.value(arguments, "--connections", "64"));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(quick ? 3 : 10));
        Duration preWarm = Options.duration(arguments, "--pre-warm", Duration.ofSeconds(quick ? 8 : 30));
        int fill = Integer.parseInt(Options.value(arguments, "--fill", quick ? "20000" : "100000"));
        if (rounds < 1 || connections < 2 || measure.toMillis() < 1000 || preWarm.isNegative() || fill < 0) {
            System.err.println(USAGE + "\n  rounds >= 1, connections >= 2, measure >= 1s, fill >= 0");
            System.exit(2);
        }
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/cache"));
        Files.createDirectories(out);
        run(out, quick, rounds, connections, measure, preWarm, fill, Options.servalOptions(args));
    }

    private static void run(Path out, boolean quick, int rounds, int connections, Duration measure, Duration preWarm,
            int fill, List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        List<Integer> counts = List.of(connections, 1);
        long seconds = WARM_UP.toSeconds() + measure.toSeconds();
        int zipfLength = (int) Math.min(Integer.MAX_VALUE / 2, ZIPF_RATE_BOUND * seconds);
        int uniquePerRun = (int) (UNIQUE_RATE_BOUND * seconds);
        List<String> lines = GameChat.lines(POOL + rounds * counts.size() * uniquePerRun, GameChat.SEED);
        String path = "/v2/models/" + DEPLOYMENT + "/infer";
        List<Buffer> pool = lines.subList(0, POOL).stream().map(text -> Buffer.buffer(Workload.oipText(text))).toList();
        Workload cached = new Workload(CACHED, path, pool.subList(0, CACHED_TEXTS));
        Workload noop = Workload.noop(NOOP_DEPLOYMENT);
        System.out.printf("Serval result cache: %d distinct lines, Zipf %.1f, %d requests per Zipf run, %d unique texts "
                + "per unique run; load average %s%n", POOL, EXPONENT, zipfLength, uniquePerRun, loadBefore);

        List<String> common = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.deployments." + DEPLOYMENT + ".max-queued-requests=1024",
                "-Dserval.deployments." + NOOP_DEPLOYMENT + ".model=noop",
                "-Dserval.deployments." + NOOP_DEPLOYMENT + ".max-queued-requests=1024"));
        common.addAll(servalOptions);
        Map<String, List<String>> settings = new LinkedHashMap<>();
        List<String> cacheOn = new ArrayList<>(common);
        cacheOn.add("-Dserval.deployments." + DEPLOYMENT + ".cache=on"); // ServalProcess starts it off by default
        settings.put(CACHE_ON, List.copyOf(cacheOn));
        List<String> off = new ArrayList<>(common);
        off.add("-Dserval.deployments." + DEPLOYMENT + ".cache=off");
        settings.put(CACHE_OFF, List.copyOf(off));

        List<Measured> runs = new ArrayList<>();
        Map<String, Object> filled = Map.of();
        Map<String, ServalProcess> servers = new LinkedHashMap<>();
        try (LoadGenerator generator = new LoadGenerator()) {
            for (Map.Entry<String, List<String>> server : settings.entrySet()) {
                servers.put(server.getKey(), ServalProcess.start(server.getValue(),
                        out.resolve("serval-" + server.getKey() + ".log")));
                System.out.printf("%s ready on port %d%n", server.getKey(), servers.get(server.getKey()).port());
            }
            ServalProcess on = servers.get(CACHE_ON);
            filled = fill(on, GameChat.zipfRequests(lines.subList(0, POOL), EXPONENT, fill, GameChat.SEED - 1));
            System.out.printf("cache filled with %d Zipf texts in %.0f s: %s%n", fill, filled.get("seconds"),
                    filled.get("cache"));
            // JIT on both, with Zipf traffic of yet another seed.
            Workload warm = zipf(pool, (int) (ZIPF_RATE_BOUND * (preWarm.toSeconds() + 1)), GameChat.SEED - 2);
            for (Map.Entry<String, ServalProcess> server : servers.entrySet()) {
                RunResult warmed = generator.closedLoopInOrder(LoadBenchmark.SERVAL, server.getValue().port(),
                        server.getValue().pid(), warm, connections, Duration.ZERO, preWarm, DRAIN);
                System.out.printf("pre-warm %-10s %8.0f req/s%n", server.getKey(), warmed.throughput());
            }
            generator.closedLoopInOrder(LoadBenchmark.SERVAL, on.port(), on.pid(), noop, connections, Duration.ZERO,
                    preWarm.dividedBy(4), DRAIN);

            int slice = 0;
            for (int round = 1; round <= rounds; round++) {
                List<String> order = new ArrayList<>(servers.keySet());
                if (round % 2 == 0) {
                    Collections.reverse(order);
                }
                for (int count : counts) {
                    Workload zipf = zipf(pool, zipfLength, GameChat.SEED + 100L * round + count);
                    int from = POOL + slice++ * uniquePerRun;
                    Workload unique = Workload.texts(UNIQUE, DEPLOYMENT, lines.subList(from, from + uniquePerRun));
                    for (Workload workload : List.of(zipf, unique)) {
                        for (String server : order) {
                            runs.add(measure(generator, round, server, servers.get(server), workload, count, measure,
                                    DEPLOYMENT));
                        }
                    }
                }
                warmCache(on, cached);
                runs.add(measure(generator, round, CACHE_ON, on, cached, 1, measure, DEPLOYMENT));
                runs.add(measure(generator, round, CACHE_ON, on, noop, 1, measure, NOOP_DEPLOYMENT));
            }
        } finally {
            for (ServalProcess server : servers.values()) {
                server.close();
            }
        }

        List<Goals.Goal> goals = CacheGoals.evaluate(rounds(runs, rounds, connections), connections);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-result-cache");
        report.put("mode", quick ? "quick" : "full");
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", Options.commit());
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        Map<String, Object> used = new LinkedHashMap<>();
        used.put("rounds", rounds);
        used.put("connections", counts);
        used.put("measureSeconds", measure.toSeconds());
        used.put("preWarmSeconds", preWarm.toSeconds());
        used.put("fillTexts", fill);
        used.put("pool", POOL);
        used.put("exponent", EXPONENT);
        used.put("zipfRequestsPerRun", zipfLength);
        used.put("uniqueTextsPerRun", uniquePerRun);
        used.put("cachedTexts", CACHED_TEXTS);
        used.put("servers", settings);
        report.put("settings", used);
        report.put("zipf", zipfShape(pool, zipfLength));
        report.put("fill", filled);
        report.put("samples", lines.subList(0, 12));
        report.put("goals", goals);
        report.put("runs", runs);
        LoadReport.json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        Files.writeString(out.resolve("summary.md"), summary(report, goals, runs, connections));
        System.out.println();
        System.out.println(LoadReport.goalsTable(goals));
        System.out.println("Report: " + out.resolve("summary.md") + " (" + report.get("durationSeconds") + " s)");
    }

    /** {@code length} requests drawn from the pool's bodies with {@link #EXPONENT}, seeded. */
    private static Workload zipf(List<Buffer> pool, int length, long seed) {
        return new Workload(ZIPF, "/v2/models/" + DEPLOYMENT + "/infer",
                GameChat.zipfRequests(pool, EXPONENT, length, seed));
    }

    /** A closed loop of {@code connections} on {@code server}, with the cache's lookups and Serval's meters around it. */
    private static Measured measure(LoadGenerator generator, int round, String name, ServalProcess server,
            Workload workload, int connections, Duration measure, String deployment) throws Exception {
        URI metrics = server.uri("/q/metrics");
        Map<String, Double> cacheBefore = ServalMetrics.cacheRequests(metrics, DEPLOYMENT);
        Map<String, Double> before = ServalMetrics.scrape(metrics, deployment);
        RunResult run = generator.closedLoopInOrder(LoadBenchmark.SERVAL, server.port(), server.pid(), workload,
                connections, WARM_UP, measure, DRAIN);
        Map<String, Double> after = ServalMetrics.scrape(metrics, deployment);
        Map<String, Double> cacheAfter = ServalMetrics.cacheRequests(metrics, DEPLOYMENT);
        Map<String, Double> cache = new LinkedHashMap<>();
        if (!cacheAfter.isEmpty()) {
            for (String result : List.of("hit", "miss", "coalesced")) {
                cache.put(result, cacheAfter.getOrDefault(result, 0.0) - cacheBefore.getOrDefault(result, 0.0));
            }
        }
        Measured measured = new Measured(round, name, workload.name(), connections, workload.bodies().size(),
                run.withServerMetrics(ServalMetrics.between(before, after)), cache);
        System.out.printf(Locale.ROOT, "round %d %-7s %3d conn %-9s %8.0f req/s  p50 %7.3f ms  p99 %7.3f ms  %s%s%n",
                round, workload.name(), connections, name, run.throughput(), run.p50(), run.p99(),
                cache.isEmpty() ? "" : "cache " + cache, run.errors().isEmpty() ? "" : "  errors " + run.errors());
        return measured;
    }

    /**
     * Fills {@code server}'s cache as serving {@code texts} (a Zipf stream) would have: they are sent once each, in
     * order, {@value #FILL_BATCH} to a request and {@value #FILL_CONCURRENCY} requests at a time (the cache is per text,
     * so what it holds and how often it saw each text are as if they had come one per request, at a fraction of the
     * HTTP cost). Returns how long it took and the cache's lookups.
     */
    private static Map<String, Object> fill(ServalProcess server, List<String> texts) throws Exception {
        URI metrics = server.uri("/q/metrics");
        Map<String, Double> before = ServalMetrics.cacheRequests(metrics, DEPLOYMENT);
        long start = System.nanoTime();
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        AtomicInteger next = new AtomicInteger();
        List<Thread> senders = new ArrayList<>();
        AtomicReference<Exception> failure = new AtomicReference<>();
        for (int t = 0; t < FILL_CONCURRENCY; t++) {
            senders.add(Thread.ofPlatform().name("cache-fill-" + t).start(() -> {
                int from;
                while (failure.get() == null && (from = next.getAndAdd(FILL_BATCH)) < texts.size()) {
                    List<String> batch = texts.subList(from, Math.min(texts.size(), from + FILL_BATCH));
                    try {
                        post(http, server.uri("/v2/models/" + DEPLOYMENT + "/infer"), JSON.writeValueAsBytes(
                                Map.of("inputs", List.of(Map.of("name", "text", "datatype", "BYTES",
                                        "shape", List.of(batch.size()), "data", batch)))));
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                    }
                }
            }));
        }
        for (Thread sender : senders) {
            sender.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("filling the cache", failure.get());
        }
        Map<String, Double> after = ServalMetrics.cacheRequests(metrics, DEPLOYMENT);
        Map<String, Object> filled = new LinkedHashMap<>();
        filled.put("texts", texts.size());
        filled.put("seconds", (System.nanoTime() - start) / 1e9);
        filled.put("cache", Map.of("hit", after.getOrDefault("hit", 0.0) - before.getOrDefault("hit", 0.0),
                "miss", after.getOrDefault("miss", 0.0) - before.getOrDefault("miss", 0.0),
                "coalesced", after.getOrDefault("coalesced", 0.0) - before.getOrDefault("coalesced", 0.0)));
        return filled;
    }

    private static void post(HttpClient http, URI uri, byte[] body) throws Exception {
        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(uri).header("content-type", "application/json")
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new IllegalStateException(uri + ": HTTP " + answer.statusCode() + " " + answer.body());
        }
    }

    /** Sends each of {@code workload}'s bodies once, so that the run after it finds every text cached. */
    private static void warmCache(ServalProcess server, Workload workload) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2)).build();
        for (Buffer body : workload.bodies()) {
            post(http, server.uri(workload.path()), body.getBytes());
        }
    }

    /** Each round's figures for {@link CacheGoals}. */
    static List<CacheGoals.Round> rounds(List<Measured> runs, int rounds, int connections) {
        List<CacheGoals.Round> figures = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            int r = round;
            long uniqueHits = runs.stream().filter(m -> m.round() == r && m.workload().equals(UNIQUE)
                    && m.server().equals(CACHE_ON)).mapToLong(m -> m.cache().isEmpty() ? -1
                    : Math.round(m.lookups("hit") + m.lookups("coalesced"))).reduce((a, b) -> a < 0 || b < 0 ? -1
                    : a + b).orElse(-1);
            long cachedMisses = find(runs, r, CACHED, CACHE_ON, 1)
                    .map(m -> m.cache().isEmpty() ? -1 : Math.round(m.lookups("miss"))).orElse(-1L);
            figures.add(new CacheGoals.Round(pair(runs, r, ZIPF, connections), pair(runs, r, UNIQUE, connections),
                    pair(runs, r, ZIPF, 1), pair(runs, r, UNIQUE, 1), cpu(runs, r, ZIPF, connections),
                    cpu(runs, r, UNIQUE, connections),
                    find(runs, r, CACHED, CACHE_ON, 1).map(m -> m.run().p50()).orElse(Double.NaN),
                    find(runs, r, LoadBenchmark.NOOP, CACHE_ON, 1).map(m -> m.run().p50()).orElse(Double.NaN),
                    uniqueHits, cachedMisses));
        }
        return figures;
    }

    private static CacheGoals.Pair pair(List<Measured> runs, int round, String workload, int connections) {
        return new CacheGoals.Pair(throughput(runs, round, workload, CACHE_ON, connections),
                throughput(runs, round, workload, CACHE_OFF, connections));
    }

    /** The server's CPU per request, µs, with the cache on and off. */
    private static CacheGoals.Pair cpu(List<Measured> runs, int round, String workload, int connections) {
        return new CacheGoals.Pair(micros(runs, round, workload, CACHE_ON, connections),
                micros(runs, round, workload, CACHE_OFF, connections));
    }

    private static double micros(List<Measured> runs, int round, String workload, String server, int connections) {
        return find(runs, round, workload, server, connections).map(m -> MachineUsage.microsPerRequest(
                m.run().cpu().server(), m.run().throughput())).orElse(Double.NaN);
    }

    private static double throughput(List<Measured> runs, int round, String workload, String server, int connections) {
        return find(runs, round, workload, server, connections).map(m -> m.run().throughput()).orElse(Double.NaN);
    }

    private static Optional<Measured> find(List<Measured> runs, int round, String workload, String server,
            int connections) {
        return runs.stream().filter(m -> m.round() == round && m.workload().equals(workload)
                && m.server().equals(server) && m.connections() == connections).findFirst();
    }

    /** The share of a Zipf run's requests taken by its most popular texts, and how many distinct texts it sends. */
    private static Map<String, Object> zipfShape(List<Buffer> pool, int length) {
        List<Buffer> requests = GameChat.zipfRequests(pool, EXPONENT, length, GameChat.SEED + 100L);
        Map<Buffer, Integer> rank = new IdentityHashMap<>();
        for (int k = 0; k < pool.size(); k++) {
            rank.put(pool.get(k), k);
        }
        long top1 = 0;
        long top1000 = 0;
        Set<Buffer> distinct = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Buffer request : requests) {
            int k = rank.get(request);
            top1 += k == 0 ? 1 : 0;
            top1000 += k < 1000 ? 1 : 0;
            distinct.add(request);
        }
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("requests", length);
        shape.put("mostPopularShare", (double) top1 / length);
        shape.put("top1000Share", (double) top1000 / length);
        shape.put("distinctTexts", distinct.size());
        return shape;
    }

    private static String summary(Map<String, Object> report, List<Goals.Goal> goals, List<Measured> runs,
            int connections) {
        @SuppressWarnings("unchecked")
        Map<String, Object> used = (Map<String, Object>) report.get("settings");
        @SuppressWarnings("unchecked")
        Map<String, Object> shape = (Map<String, Object>) report.get("zipf");
        @SuppressWarnings("unchecked")
        Map<String, Object> fill = (Map<String, Object>) report.get("fill");
        StringBuilder md = new StringBuilder(LoadReport.header(report, "Serval result cache"));
        md.append(String.format(Locale.ROOT, "The default MiniLM (`%s`), one text per OIP request, on two Servals "
                + "started together: `%s` (as shipped) and `%s` (`-Dserval.deployments.%s.cache=off`), measured in "
                + "alternation (their order flipped every round), %s rounds of closed loops at %d and 1 connections, "
                + "%s s each after %d s unrecorded, both pre-warmed %s s with Zipf traffic of another seed; before "
                + "that, the cache-on server's cache was filled with %,d texts of a Zipf stream of a third seed, 32 to "
                + "a request (%.0f s; lookups %s). `zipf`: "
                + "texts drawn with exponent %.1f from %,d distinct Roblox-like chat lines (%,d requests per run, "
                + "the same for both servers: the most popular text %.1f %% of them, the 1,000 most popular %.1f %%, "
                + "%,d distinct texts); `unique`: texts never sent before in the run (%,d per run); `cached`: the %d "
                + "most popular lines, each sent once just before; `noop`: the no-op model on the cache-on server. "
                + "Goals are the median of the rounds' figures. Other work shares this machine: see the load "
                + "average above and the CPU columns of `report.json`.%n%n", DEPLOYMENT, CACHE_ON, CACHE_OFF,
                DEPLOYMENT, used.get("rounds"), connections, used.get("measureSeconds"), WARM_UP.toSeconds(),
                used.get("preWarmSeconds"), (Integer) used.get("fillTexts"),
                ((Number) fill.getOrDefault("seconds", Double.NaN)).doubleValue(), fill.get("cache"), EXPONENT, POOL, (Integer) shape.get("requests"),
                100 * (Double) shape.get("mostPopularShare"), 100 * (Double) shape.get("top1000Share"),
                (Integer) shape.get("distinctTexts"), (Integer) used.get("uniqueTextsPerRun"), CACHED_TEXTS));
        md.append(LoadReport.goalsTable(goals)).append('\n');
        md.append("All goals met: ").append(CacheGoals.allMet(goals) ? "yes" : "**no**").append(".\n\n");
        md.append("## Runs\n\nCache lookups are Serval's `serval_cache_requests_total{deployment=\"").append(DEPLOYMENT)
                .append("\"}` over the whole run (warm-up and drain included; texts, one per request here); "
                        + "the cache-off server counts none.\n\n");
        md.append("| round | workload | connections | server | req/s | p50 ms | p99 ms | server µs/req | hits | misses "
                + "| coalesced | hit share | errors |\n|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        List<String> wrapped = new ArrayList<>();
        for (Measured m : runs) {
            RunResult run = m.run();
            double hits = m.lookups("hit") + m.lookups("coalesced");
            double all = hits + m.lookups("miss");
            md.append(String.format(Locale.ROOT, "| %d | %s | %d | %s | %.0f | %.3f | %.3f | %.1f | %s | %s | %s | %s | %s |%n",
                    m.round(), m.workload(), m.connections(), m.server(), run.throughput(), run.p50(), run.p99(),
                    MachineUsage.microsPerRequest(run.cpu().server(), run.throughput()),
                    count(m, "hit"), count(m, "miss"), count(m, "coalesced"),
                    m.cache().isEmpty() || all == 0 ? "" : String.format(Locale.ROOT, "%.3f", hits / all),
                    run.errors().isEmpty() ? "0" : run.errors()));
            if ((m.workload().equals(ZIPF) || m.workload().equals(UNIQUE)) && m.wrapped(Duration.ofSeconds(((Number) used.get("measureSeconds")).longValue()))) {
                wrapped.add("round " + m.round() + " " + m.workload() + " " + m.connections() + " " + m.server());
            }
        }
        if (!wrapped.isEmpty()) {
            md.append("\n**Runs faster than their requests were sized for** (some sent twice): ").append(wrapped)
                    .append('\n');
        }
        md.append("\nSample lines: ").append(report.get("samples")).append(".\n\nSettings, each server's arguments "
                + "and every figure: `report.json`.\n");
        return md.toString();
    }

    private static String count(Measured m, String result) {
        return m.cache().isEmpty() ? "" : String.format(Locale.ROOT, "%.0f", m.lookups(result));
    }
}
