package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RayServeBenchmarkTest {

    private static final RawLimits.Split TWO_BY_ONE = new RawLimits.Split(2, 1);
    private static final RawLimits.Split ONE_BY_TWO = new RawLimits.Split(1, 2);
    private static final RawLimits.Split ONE_BY_ONE = new RawLimits.Split(1, 1);

    @Test
    void everyServerIsSetAgainstTheBestRawBatchOneRateTheFastestSingleTextAndRayServesBetterIngress() {
        RawLimits limits = new RawLimits(
                List.of(new RawLimits.Runtime("djl", "DJL", "1.32.0", true, null),
                        new RawLimits.Runtime("python-1.32.0", "Python", "1.32.0", false, null)),
                List.of(new RawLimits.Rate("djl", "short", TWO_BY_ONE, 1, 1000),
                        new RawLimits.Rate("python-1.32.0", "short", TWO_BY_ONE, 1, 1200),
                        new RawLimits.Rate("python-1.32.0", "short", ONE_BY_TWO, 1, 600)),
                List.of(new RawLimits.Single("python-1.32.0", ONE_BY_TWO, 1.5, 2.0, 1.6),
                        new RawLimits.Single("python-1.32.0", ONE_BY_ONE, 1.8, 2.5, 1.9)));
        List<RayServeBenchmark.Figures> servers = List.of(
                new RayServeBenchmark.Figures("Serval, OIP", 1080, 64, 1.75, 0.10, 0),
                new RayServeBenchmark.Figures("Ray Serve + HAProxy", 600, 64, 4.0, 0.05, 0),
                new RayServeBenchmark.Figures("Ray Serve, Python proxy", 400, 8, 6.0, 0.04, 3));

        String md = RayServeBenchmark.summary(Instant.EPOCH, "1.0", "1.1", Duration.ofSeconds(10), 2, List.of(8, 64),
                limits, servers, Map.of("Ray Serve + HAProxy", "Ray 2.60.0, ingress haproxy"));

        for (String line : List.of("| raw python-1.32.0, 1x2, batch 1 | 600 | 1.50 |",
                "| raw python-1.32.0, one worker of 1 thread(s), alone | | 1.80 |",
                "| Serval, OIP | 1080 (64 connections) | 1.75 |",
                "| Ray Serve, Python proxy | 400 (8 connections) | 6.00 |",
                "--connections 8,64`",
                "(python-1.32.0 2x1, 1200 texts/s)",
                "(python-1.32.0 1x2, 1.50 ms)",
                // 1080 / 1200, 1.75 - 1.50, 1080 / 600 (HAProxy, the faster ingress)
                "| Serval, OIP | 0.900 | +0.250 | 1.800 | 0.10 | 0 |",
                "| Ray Serve, Python proxy | 0.333 | +4.500 | 0.667 | 0.04 | 3 |",
                "- Ray Serve + HAProxy: Ray 2.60.0, ingress haproxy")) {
            assertTrue(md.contains(line), () -> "no '" + line + "' in:\n" + md);
        }
    }

    @Test
    void aFigureIsTheBestRateAtAnyConnectionCountAndTheBestP50OfItsRoundsWithEveryRoundsErrors() {
        RayServeBenchmark.Figures figures = RayServeBenchmark.best("x", List.of(
                new RayServeBenchmark.RunPair(run(1, 1, 2.0, Map.of()),
                        List.of(run(8, 900, 0.05, Map.of("HTTP 503", 2L)), run(64, 300, 0.02, Map.of()))),
                new RayServeBenchmark.RunPair(run(1, 1, 1.5, Map.of("reset", 1L)),
                        List.of(run(8, 950, 0.07, Map.of()), run(64, 320, 0.03, Map.of())))));

        assertEquals(950, figures.textsPerSecond());
        assertEquals(8, figures.connections());
        assertEquals(1.5, figures.p50());
        assertEquals(0.07, figures.generatorShare());
        assertEquals(3, figures.errors());
    }

    @Test
    void rayServesVenvPinsEveryPackage() {
        List<String> requirements = RayServeBenchmark.requirements();
        assertTrue(requirements.stream().allMatch(r -> r.contains("==")), requirements::toString);
        assertTrue(requirements.contains("ray[serve]==" + RayServeBenchmark.RAY), requirements::toString);
    }

    @Test
    void theRayServeAppCompilesAndAnswersOnThePathTheGeneratorSendsTo(@TempDir Path dir) throws Exception {
        Path script = PythonRawLoop.writeScript(dir, RayServeBenchmark.SCRIPT);
        String source = Files.readString(script);
        String route = "ROUTE = \"" + Workload.texts("w", LoadBenchmark.MINILM_DEPLOYMENT, List.of("x")).path() + "\"";
        assertTrue(source.contains(route), () -> "the script does not serve " + route);

        Process compile = new ProcessBuilder("python3", "-m", "py_compile", script.toString()).redirectErrorStream(true)
                .start();
        String output = new String(compile.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, compile.waitFor(), output);
    }

    @Test
    void theOpenAiWorkloadSendsOneTextPerRequestToTheEmbeddingsEndpoint() throws Exception {
        Workload workload = Workload.openAiTexts("w", "all-minilm-l6-v2", List.of("a \"quoted\" text", "two"));

        assertEquals("/v1/embeddings", workload.path());
        JsonNode body = new ObjectMapper().readTree(workload.body(0).toString(StandardCharsets.UTF_8));
        assertEquals("all-minilm-l6-v2", body.get("model").asText());
        assertEquals("a \"quoted\" text", body.get("input").asText());
        assertEquals(2, body.size());
    }

    /** A closed loop of {@code connections}: its p50 (at one connection) or its generator's share (at more). */
    private static RunResult run(int connections, double throughput, double p50OrShare, Map<String, Long> errors) {
        boolean lone = connections == 1;
        return new RunResult("server", "w", "closed", connections, Double.NaN, throughput, 1000, errors,
                lone ? p50OrShare : 3.0, 0, 0, 0, 0, 0, Double.NaN, Double.NaN,
                new MachineUsage.Shares(lone ? 0.01 : p50OrShare, 0.8, 0.0), "", Map.of(), RunResult.Refusals.NONE,
                new RunResult.ClientConnections(1, 1, 0, 0));
    }
}
