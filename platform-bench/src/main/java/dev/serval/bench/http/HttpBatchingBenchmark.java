package dev.serval.bench.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.bench.load.ChatTexts;
import dev.serval.bench.load.MachineUsage;
import dev.serval.bench.load.RawEmbeddingLoop;
import dev.serval.bench.load.ServalProcess;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * MiniLM over HTTP at saturation, against the same model run in a raw in-process DJL loop, in one run: for batch
 * sizes 1, 8 and 32, texts/s through {@code POST /v1/embeddings} (32 closed-loop clients, one text per request) as
 * a fraction of what 2 threads with their own predictors reach on the same texts in process; and single-client p50
 * latency, with the CPU share of the load generator and of Serval over the measurement (of all cores). Batch size 1
 * is Serval's default for the quantised MiniLM (batch invariance: every text alone); 8 and 32
 * run with {@code batch-invariance=false} and that {@code max-batch-size}, so that batches really form.
 *
 * <p>Texts: 2,000 seeded chat-like texts of 5-30 words, of which 1 % are over 300 words (truncated at 256 tokens,
 * as served). Serval is the packaged application ({@code platform-api/target/quarkus-app}), started once per batch
 * size on a free loopback port with 2 predictor threads of 1 intra-op thread, and stopped afterwards. Everything
 * talks to 127.0.0.1 only, and every phase is bounded in time.
 *
 * <p>Run from the repository root (about 5 minutes on two cores; {@code --quick} about 1):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-api,platform-bench -am
 * java -cp platform-bench/target/benchmarks.jar dev.serval.bench.http.HttpBatchingBenchmark [--quick]
 * }</pre>
 */
public final class HttpBatchingBenchmark {

    private static final int CLIENTS = 32;
    private static final int THREADS = 2;
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        boolean quick = Arrays.asList(args).contains("--quick");
        // 20 s: with 8 s, C2 was still compiling Serval's request path in the measured window (Serval/raw 0.67-0.81).
        Duration warmUp = Duration.ofSeconds(quick ? 3 : 20);
        Duration measure = Duration.ofSeconds(quick ? 5 : 15);
        List<String> texts = ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int batch : new int[] {1, 8, 32}) {
            double raw = rawLoop(texts, batch, warmUp, measure);
            Map<String, Object> served = serval(texts, batch, warmUp, measure);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("maxBatchSize", batch);
            row.put("batchInvariance", batch == 1);
            row.put("rawTextsPerSecond", Math.round(raw));
            row.putAll(served);
            row.put("servalOverRaw", Math.round((double) served.get("textsPerSecond") / raw * 1000) / 1000.0);
            rows.add(row);
            System.out.println(row);
        }
        Path out = Path.of("platform-bench", "target", "http-batching.json");
        Files.createDirectories(out.getParent());
        JSON.writerWithDefaultPrettyPrinter().writeValue(out.toFile(), Map.of("cpus", Runtime.getRuntime().availableProcessors(),
                "java", System.getProperty("java.version"), "clients", CLIENTS, "rows", rows));
        System.out.printf("%n| max batch | invariant | raw loop texts/s | Serval texts/s | Serval / raw | errors | p50 single client"
                + " | CPU: clients | CPU: Serval |%n");
        System.out.println("|---|---|---|---|---|---|---|---|---|");
        for (Map<String, Object> row : rows) {
            System.out.printf("| %s | %s | %s | %.0f | %s | %s | %.2f ms | %.0f %% | %.0f %% |%n", row.get("maxBatchSize"),
                    row.get("batchInvariance"), row.get("rawTextsPerSecond"), (double) row.get("textsPerSecond"),
                    row.get("servalOverRaw"), row.get("errors"), (double) row.get("p50Millis"),
                    100 * (double) row.get("clientCpuShare"), 100 * (double) row.get("servalCpuShare"));
        }
        System.out.println("written to " + out);
    }

    /** Texts/s of THREADS threads, each with its own predictor, running batches of {@code batch} back to back. */
    static double rawLoop(List<String> texts, int batch, Duration warmUp, Duration measure) throws Exception {
        try (Model<String, Embedding> model = RawEmbeddingLoop.load(batch == 1)) {
            return RawEmbeddingLoop.textsPerSecond(model, texts, THREADS, batch, warmUp, measure);
        }
    }

    /** Starts Serval for {@code batch}, drives it, stops it. */
    static Map<String, Object> serval(List<String> texts, int batch, Duration warmUp, Duration measure) throws Exception {
        String d = "-Dserval.deployments.all-minilm-l6-v2.";
        Path log = Path.of("platform-bench", "target", "serval-http-" + batch + ".log");
        try (ServalProcess server = ServalProcess.start(List.of(d + "batch-invariance=" + (batch == 1),
                d + "max-batch-size=" + batch, d + "max-ongoing-requests=64", d + "max-queued-requests=1024"), log)) {
            HttpClient client = HttpClient.newBuilder().executor(Executors.newVirtualThreadPerTaskExecutor())
                    .connectTimeout(Duration.ofSeconds(5)).build();
            URI base = server.uri("");
            AtomicLong ok = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            long start = System.nanoTime();
            long measureFrom = start + warmUp.toNanos();
            long end = measureFrom + measure.toNanos();
            long[] cpuAtStart = new long[2];
            Thread cpuProbe = Thread.ofVirtual().start(() -> {
                try {
                    // sleeps until the measurement window opens, to read the CPU counters at its start
                    Thread.sleep(Duration.ofNanos(Math.max(0, measureFrom - System.nanoTime())));
                    cpuAtStart[0] = MachineUsage.generatorCpu();
                    cpuAtStart[1] = MachineUsage.processCpu(server.pid());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try (var clients = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int c = 0; c < CLIENTS; c++) {
                    int offset = c * 61;
                    clients.submit(() -> {
                        int next = offset;
                        while (System.nanoTime() < end) {
                            boolean success = embed(client, base, texts.get(next++ % texts.size()));
                            if (System.nanoTime() >= measureFrom) {
                                (success ? ok : errors).incrementAndGet();
                            }
                        }
                        return null;
                    });
                }
            }
            long clientCpu = MachineUsage.generatorCpu() - cpuAtStart[0];
            long serverCpu = MachineUsage.processCpu(server.pid()) - cpuAtStart[1];
            cpuProbe.join();
            double textsPerSecond = ok.get() / (measure.toNanos() / 1e9);
            double cores = Runtime.getRuntime().availableProcessors() * (double) measure.toNanos();
            List<Long> latencies = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                long t0 = System.nanoTime();
                embed(client, base, texts.get((i * 7 + 1) % texts.size()));
                if (i >= 50) {
                    latencies.add(System.nanoTime() - t0);
                }
            }
            latencies.sort(null);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("textsPerSecond", textsPerSecond);
            result.put("errors", errors.get());
            result.put("p50Millis", latencies.get(latencies.size() / 2) / 1e6);
            result.put("clientCpuShare", Math.round(clientCpu / cores * 1000) / 1000.0);
            result.put("servalCpuShare", Math.round(serverCpu / cores * 1000) / 1000.0);
            return result;
        }
    }

    private static boolean embed(HttpClient client, URI base, String text) {
        try {
            String body = "{\"model\":\"all-minilm-l6-v2\",\"input\":" + JSON.writeValueAsString(text) + "}";
            HttpResponse<byte[]> response = client.send(HttpRequest.newBuilder(base.resolve("/v1/embeddings"))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
            return response.statusCode() == 200;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}
