package dev.serval.api;

import static dev.serval.api.Serving.INFER;
import static dev.serval.api.Serving.MODEL;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URL;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Serval scraped by a real Prometheus: Debian's {@code prometheus} package, started here on 127.0.0.1 with a 1 s
 * scrape of Serval's {@code /q/metrics}. The test sends known traffic and then reads the serving metrics back through
 * Prometheus's HTTP query API, with their labels and exact values. It fails (never skips) when Prometheus is not
 * installed: {@code apt-get install -y --no-install-recommends prometheus} (.ci/run does so).
 */
@QuarkusTest
class PrometheusScrapeTest {

    private static final String JOB = "serval";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration SCRAPE_TIMEOUT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** The Prometheus this class started, stopped at the latest by {@link #stopPrometheus()} or the JVM's exit. */
    private static Process prometheus;
    private static Thread stopOnExit;

    @TestHTTPResource("/")
    URL base;

    @Test
    void prometheusScrapesTheServingMetricsWithTheirLabelsAndValues() throws Exception {
        Path binary = prometheusBinary();
        Serving.awaitReady();
        Path work = Files.createDirectories(Path.of("target", "prometheus"));
        work = Files.createTempDirectory(work, "run-");
        int port = freeLoopbackPort();
        String prom = "http://127.0.0.1:" + port;
        Path log = work.resolve("prometheus.log");
        try {
            startPrometheus(binary, work, port, base.getPort(), log);
            awaitReady(prom, log);

            Map<String, Double> before = servalMetrics();
            // Texts of this run only: a text the result cache holds would not reach the model.
            long run = System.nanoTime();
            String oip = "{\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\",\"shape\":[1],\"data\":[\"scraped %d %d\"]}]}";
            for (int i = 0; i < 3; i++) {
                given().contentType("application/json").body(oip.formatted(run, i)).post(INFER).then().statusCode(200);
            }
            given().contentType("application/json").body("{\"inputs\":7}").post(INFER).then().statusCode(400);
            given().contentType("application/json").body("{\"inputs\":[]}").post(INFER).then().statusCode(400);
            given().contentType("application/json").body("{\"model\":\"" + MODEL + "\",\"input\":[\"a " + run
                    + "\",\"b " + run + "\"]}")
                    .post("/v1/embeddings").then().statusCode(200);
            Map<String, Double> after = servalMetrics();

            String oipOk = "serval_requests_total{api=\"oip\",deployment=\"" + MODEL + "\",outcome=\"ok\"}";
            String oipBad = "serval_requests_total{api=\"oip\",deployment=\"" + MODEL + "\",outcome=\"bad_request\"}";
            String openAiOk = "serval_requests_total{api=\"openai\",deployment=\"" + MODEL + "\",outcome=\"ok\"}";
            String oipOkCount = "serval_request_seconds_count{api=\"oip\",deployment=\"" + MODEL + "\",outcome=\"ok\"}";
            String inferences = "serval_inference_seconds_count{deployment=\"" + MODEL + "\"}";
            assertEquals(value(before, oipOk) + 3, value(after, oipOk), "Serval's own count of OIP successes");
            assertEquals(value(before, oipBad) + 2, value(after, oipBad), "Serval's own count of OIP bad requests");
            assertEquals(value(before, openAiOk) + 1, value(after, openAiOk), "Serval's own count of OpenAI successes");
            double inferencesAfter = value(after, inferences);
            assertTrue(inferencesAfter >= value(before, inferences) + 5, "5 texts were embedded: " + inferencesAfter);

            long deadline = System.nanoTime() + SCRAPE_TIMEOUT.toNanos();
            String selector = "deployment=\"" + MODEL + "\"";
            JsonNode ok = await(prom, log, deadline, "serval_requests_total{" + selector + ",api=\"oip\",outcome=\"ok\"}",
                    v -> v == value(after, oipOk));
            assertLabels(ok, base.getPort(), Map.of("deployment", MODEL, "api", "oip", "outcome", "ok"));
            JsonNode bad = await(prom, log, deadline,
                    "serval_requests_total{" + selector + ",api=\"oip\",outcome=\"bad_request\"}",
                    v -> v == value(after, oipBad));
            assertLabels(bad, base.getPort(), Map.of("deployment", MODEL, "api", "oip", "outcome", "bad_request"));
            JsonNode openAi = await(prom, log, deadline,
                    "serval_requests_total{" + selector + ",api=\"openai\",outcome=\"ok\"}",
                    v -> v == value(after, openAiOk));
            assertLabels(openAi, base.getPort(), Map.of("deployment", MODEL, "api", "openai", "outcome", "ok"));

            // The latency histogram: its +Inf bucket counts every timed request, and it has finite buckets besides.
            JsonNode inf = await(prom, log, deadline,
                    "serval_request_seconds_bucket{" + selector + ",api=\"oip\",outcome=\"ok\",le=\"+Inf\"}",
                    v -> v == value(after, oipOkCount));
            assertLabels(inf, base.getPort(), Map.of("deployment", MODEL, "api", "oip", "outcome", "ok", "le", "+Inf"));
            await(prom, log, deadline, "count(serval_request_seconds_bucket{" + selector + ",api=\"oip\",outcome=\"ok\"})",
                    v -> v > 10);
            // Health probes run inferences too, so this one may have grown since Serval was read.
            JsonNode inference = await(prom, log, deadline, "serval_inference_seconds_count{" + selector + "}",
                    v -> v >= inferencesAfter);
            assertLabels(inference, base.getPort(), Map.of("deployment", MODEL));
            JsonNode running = await(prom, log, deadline, "serval_replicas{" + selector + ",state=\"running\"}",
                    v -> v == 1);
            assertLabels(running, base.getPort(), Map.of("deployment", MODEL, "state", "running"));
            JsonNode up = await(prom, log, deadline, "up{job=\"" + JOB + "\"}", v -> v == 1);
            assertLabels(up, base.getPort(), Map.of());
        } finally {
            stopPrometheus();
        }
    }

    /** Prometheus from the PATH (or /usr/bin), or an assertion failure saying how to install it. */
    private static Path prometheusBinary() {
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                if (!dir.isEmpty()) {
                    candidates.add(Path.of(dir, "prometheus"));
                }
            }
        }
        candidates.add(Path.of("/usr/bin/prometheus"));
        for (Path candidate : candidates) {
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("This test needs a real Prometheus, and no 'prometheus' executable is on the PATH "
                + "(nor /usr/bin/prometheus). Install Debian's prometheus package: "
                + "apt-get install -y --no-install-recommends prometheus   (.ci/run does this before ./mvnw verify)");
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static synchronized void startPrometheus(Path binary, Path work, int port, int servalPort, Path log)
            throws IOException {
        Path config = work.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                  evaluation_interval: 1s
                scrape_configs:
                  - job_name: %s
                    metrics_path: /q/metrics
                    static_configs:
                      - targets: ['127.0.0.1:%d']
                """.formatted(JOB, servalPort));
        prometheus = new ProcessBuilder(binary.toString(),
                "--config.file=" + config.toAbsolutePath(),
                "--storage.tsdb.path=" + work.resolve("data").toAbsolutePath(),
                "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        Process started = prometheus;
        stopOnExit = new Thread(() -> stop(started), "stop-prometheus");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
    }

    @AfterAll
    static synchronized void stopPrometheus() {
        if (prometheus == null) {
            return;
        }
        stop(prometheus);
        prometheus = null;
        try {
            Runtime.getRuntime().removeShutdownHook(stopOnExit);
        } catch (IllegalStateException exiting) {
            // the JVM is exiting: the hook stops it (already stopped here)
        }
        stopOnExit = null;
    }

    private static void stop(Process process) {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitReady(String prom, Path log) throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (true) {
            if (!prometheus.isAlive()) {
                throw new AssertionError("Prometheus exited with " + prometheus.exitValue() + " before it was ready:\n"
                        + tail(log));
            }
            try {
                HttpResponse<String> ready = get(prom + "/-/ready");
                if (ready.statusCode() == 200) {
                    return;
                }
            } catch (IOException notListeningYet) {
                // keep polling until the deadline
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Prometheus was not ready within " + READY_TIMEOUT + ":\n" + tail(log));
            }
            Thread.sleep(200); // polling a process we do not control: nothing to wait on but time
        }
    }

    /**
     * Polls instant query {@code query} until it returns exactly one series whose value satisfies {@code expected};
     * returns that series ({@code metric} and {@code value}).
     */
    private static JsonNode await(String prom, Path log, long deadline, String query, DoublePredicate expected)
            throws Exception {
        String last = "nothing yet";
        while (true) {
            HttpResponse<String> response = get(prom + "/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
            last = response.statusCode() + " " + response.body();
            if (response.statusCode() == 200) {
                JsonNode body = JSON.readTree(response.body());
                assertEquals("success", body.path("status").asText(), last);
                assertEquals("vector", body.path("data").path("resultType").asText(), last);
                JsonNode result = body.path("data").path("result");
                if (result.size() == 1 && expected.test(Double.parseDouble(result.get(0).path("value").get(1).asText()))) {
                    return result.get(0);
                }
                assertTrue(result.size() <= 1, "more than one series for " + query + ": " + last);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Prometheus did not report the expected value for " + query + " within "
                        + SCRAPE_TIMEOUT + "; last answer: " + last + "\ntargets: "
                        + get(prom + "/api/v1/targets").body() + "\nlog:\n" + tail(log));
            }
            Thread.sleep(250); // waiting for the next 1 s scrape: nothing to wait on but time
        }
    }

    /** The series carries the scrape's own labels (job, instance) and {@code labels}. */
    private static void assertLabels(JsonNode series, int servalPort, Map<String, String> labels) {
        JsonNode metric = series.path("metric");
        assertEquals(JOB, metric.path("job").asText(), "job label of " + series);
        assertEquals("127.0.0.1:" + servalPort, metric.path("instance").asText(), "instance label of " + series);
        labels.forEach((name, value) -> assertEquals(value, metric.path(name).asText(), name + " label of " + series));
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})? (\\S+)$",
            Pattern.MULTILINE);
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** Serval's /q/metrics as {@code name{label="value",...}} (labels sorted by name) to value. */
    private static Map<String, Double> servalMetrics() {
        String text = given().get("/q/metrics").then().statusCode(200).extract().asString();
        Map<String, Double> samples = new HashMap<>();
        Matcher sample = SAMPLE.matcher(text);
        while (sample.find()) {
            StringBuilder key = new StringBuilder(sample.group(1));
            if (sample.group(2) != null && sample.group(2).length() > 2) {
                Map<String, String> labels = new TreeMap<>();
                Matcher label = LABEL.matcher(sample.group(2));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
                key.append('{');
                labels.forEach((name, value) -> key.append(name).append("=\"").append(value).append("\","));
                key.setCharAt(key.length() - 1, '}');
            }
            samples.put(key.toString(), Double.parseDouble(sample.group(3)));
        }
        return samples;
    }

    private static double value(Map<String, Double> samples, String key) {
        Double value = samples.get(key);
        assertTrue(value != null, key + " missing from Serval's /q/metrics");
        return value;
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
