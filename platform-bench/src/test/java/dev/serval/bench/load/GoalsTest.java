package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GoalsTest {

    private static final MachineUsage.Shares CPU = new MachineUsage.Shares(0.1, 0.5, 0);
    private static final RunResult.ClientConnections CLIENT = new RunResult.ClientConnections(64, 64, 0.1, 0.2);

    private static RunResult closed(String target, String workload, int connections, double throughput, double p50) {
        return new RunResult(target, workload, "closed", connections, Double.NaN, throughput, 1000, Map.of(), p50,
                p50, p50, p50, p50, p50, Double.NaN, Double.NaN, CPU, "", Map.of(), RunResult.Refusals.NONE, CLIENT);
    }

    private static RunResult open(String target, String workload, double rate, double p50, double p99,
            Map<String, Long> errors) {
        return new RunResult(target, workload, "open", 64, rate, rate, 1000, errors, p50, p50, p99, p99, p99, p50,
                0.05, 0.1, CPU, "", Map.of(), RunResult.Refusals.NONE, CLIENT);
    }

    private static Goals.Goal find(List<Goals.Goal> goals, String workload, String figureStart) {
        return goals.stream().filter(g -> g.workload().equals(workload) && g.figure().startsWith(figureStart))
                .findFirst().orElseThrow();
    }

    @Test
    void noopComparesServalWithTheBareServerAtHalfOfServalsSaturation() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.BARE, LoadBenchmark.NOOP, 32, 80_000, 0.4),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 1, 10_000, 0.1),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 32, 54_000, 0.6),
                open(LoadBenchmark.BARE, LoadBenchmark.NOOP, 27_000, 0.10, 1.0, Map.of()),
                open(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 27_000, 0.25, 2.5, Map.of()),
                open(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 45_000, 9, 90, Map.of()));

        List<Goals.Goal> goals = Goals.evaluate(runs, Map.of());

        Goals.Goal throughput = find(goals, LoadBenchmark.NOOP, "req/s");
        assertEquals(54_000.0 / 80_000, throughput.value(), 1e-9);
        assertFalse(throughput.met()); // 0.675 < 0.70
        Goals.Goal p50 = find(goals, LoadBenchmark.NOOP, "p50");
        assertEquals(0.15, p50.value(), 1e-9);
        assertTrue(p50.met());
        Goals.Goal p99 = find(goals, LoadBenchmark.NOOP, "p99");
        assertEquals(1.5, p99.value(), 1e-9);
        assertFalse(p99.met());
    }

    @Test
    void theNoopLimitIsTheBareServersBetterEventLoopCount() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.BARE, LoadBenchmark.NOOP, 64, 70_000, 0.4),
                closed(LoadBenchmark.BARE_SERVAL_LOOPS, LoadBenchmark.NOOP, 64, 90_000, 0.4),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 64, 54_000, 0.6));

        Goals.Goal throughput = find(Goals.evaluate(runs, Map.of()), LoadBenchmark.NOOP, "req/s");
        assertEquals(54_000.0 / 90_000, throughput.value(), 1e-9);
        assertTrue(throughput.limitName().contains("Serval's event loops"), throughput.limitName());

        runs = List.of(
                closed(LoadBenchmark.BARE, LoadBenchmark.NOOP, 64, 95_000, 0.4),
                closed(LoadBenchmark.BARE_SERVAL_LOOPS, LoadBenchmark.NOOP, 64, 90_000, 0.4),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 64, 54_000, 0.6));
        throughput = find(Goals.evaluate(runs, Map.of()), LoadBenchmark.NOOP, "req/s");
        assertEquals(54_000.0 / 95_000, throughput.value(), 1e-9);
    }

    @Test
    void errorsCountOnlyInOpenLoopRunsBelowSaturation() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 32, 50_000, 0.6),
                open(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 25_000, 0.25, 2.5, Map.of("HTTP 503", 2L)),
                open(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 45_000, 9, 90, Map.of()),
                open(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 55_000, 900, 2000, Map.of("unfinished", 40L)));

        Goals.Goal errors = find(Goals.evaluate(runs, Map.of()), "all", "errors");

        assertEquals(2, errors.value()); // the 40 unfinished at 110 % of saturation do not count
        assertTrue(errors.figure().contains("2 open-loop runs"));
        assertFalse(errors.met());
    }

    @Test
    void textsAreComparedWithTheBetterRawLoopMeasurementAndTheSingleRequestLatency() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 1, 300, 3.0),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 64, 760, 80),
                open(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 532, 6, 8.0, Map.of()));
        Map<String, Object> limits = Map.of("rawInterleaved", Map.of(LoadBenchmark.MINILM_SHORT,
                Map.of("batch", 32, "before", 790.0, "after", 800.0, "limit", 800.0)));

        List<Goals.Goal> goals = Goals.evaluate(runs, limits);

        Goals.Goal throughput = find(goals, LoadBenchmark.MINILM_SHORT, "texts/s");
        assertEquals(0.95, throughput.value(), 1e-9);
        assertTrue(throughput.met());
        Goals.Goal tail = find(goals, LoadBenchmark.MINILM_SHORT, "p99");
        assertEquals(8.0 / 3.0, tail.value(), 1e-9);
        assertTrue(tail.met());
    }

    @Test
    void aFigureWithoutItsRunHasNoVerdict() {
        List<RunResult> runs = List.of(closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_MIXED, 64, 700, 90));
        Map<String, Object> limits = Map.of("rawInterleaved", Map.of(LoadBenchmark.MINILM_MIXED,
                Map.of("batch", 32, "before", 790.0, "after", 800.0, "limit", 800.0)));

        List<Goals.Goal> goals = Goals.evaluate(runs, limits);

        assertEquals(1, goals.size()); // no open-loop run at 70 %: no tail figure, and no error count
        assertNull(goals.getFirst().met()); // mixed texts are reported without a goal
    }

    @Test
    void noopSingleRequestOverheadIsServalsP50MinusTheBareServersAtOneConnection() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.BARE, LoadBenchmark.NOOP, 1, 9_000, 0.080),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 1, 8_000, 0.120),
                closed(LoadBenchmark.BARE, LoadBenchmark.NOOP, 32, 80_000, 0.4),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.NOOP, 32, 60_000, 0.6));

        List<Goals.Goal> goals = Goals.evaluate(runs, Map.of());

        assertTrue(find(goals, LoadBenchmark.NOOP, "req/s").met()); // 0.75
        Goals.Goal single = find(goals, LoadBenchmark.NOOP, "single-request");
        assertEquals(0.04, single.value(), 1e-9);
        assertTrue(single.met());
    }

    @Test
    void servalIsComparedWithTheBestRawFiguresOfEveryRuntimeAndSplit() {
        List<RunResult> runs = List.of(
                closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 1, 250, 3.2),
                closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 64, 400, 80));
        Map<String, Object> limits = Map.of("cores", 2, "raw", RawLimitsTest.sample(), "rawInterleaved",
                Map.of(LoadBenchmark.MINILM_SHORT, Map.of("batch", 32, "split", "2x1", "limit", 440.0)));

        List<Goals.Goal> goals = Goals.evaluate(runs, limits);

        Goals.Goal batch1 = find(goals, LoadBenchmark.MINILM_SHORT, "texts/s at saturation vs the raw batch-1");
        assertEquals(400.0 / 401, batch1.value(), 1e-9);
        assertTrue(batch1.limitName().contains("python-1.32.0 2x1 batch 1"), batch1.limitName());
        assertNull(batch1.met()); // batching on: not the default configuration, reported without a goal
        Goals.Goal any = find(goals, LoadBenchmark.MINILM_SHORT, "texts/s at saturation vs the raw limit");
        assertEquals(400.0 / 492, any.value(), 1e-9);
        assertNull(any.met());
        Goals.Goal single = find(goals, LoadBenchmark.MINILM_SHORT, "single-request");
        assertEquals(3.2 - 3.0, single.value(), 1e-9); // against python-1.32.0 at 1x2
        assertTrue(single.met());
    }

    @Test
    void efficiencyIsServalsServerCpuPerTextOverTheRawLoopsAtTheSameBatch() {
        String workload = LoadBenchmark.MINILM_SHORT + "-default";
        // Serval's server had half of every core at 400 texts/s: cores x 0.5 / 400 s of CPU per text.
        List<RunResult> runs = List.of(closed(LoadBenchmark.SERVAL, workload, 1, 200, 3.0),
                closed(LoadBenchmark.SERVAL, workload, 64, 400, 80));
        double servalMicros = Runtime.getRuntime().availableProcessors() * 0.5 * 1e6 / 400;
        Map<String, Object> interleaved = Map.of("batch", 1, "split", "2x1", "limit", 410.0,
                "cpuMicrosPerText", servalMicros / 1.04);
        Map<String, Object> limits = Map.of("raw", RawLimitsTest.sample(),
                "rawInterleaved", Map.of(workload, interleaved, LoadBenchmark.MINILM_SHORT, Map.of("batch", 16,
                        "split", "2x1", "limit", 900.0, "cpuMicrosPerText", servalMicros / 1.2)));
        List<RunResult> both = new java.util.ArrayList<>(runs);
        both.add(closed(LoadBenchmark.SERVAL, LoadBenchmark.MINILM_SHORT, 64, 400, 80));

        List<Goals.Goal> goals = Goals.evaluate(both, limits);

        Goals.Goal efficiency = find(goals, workload, "server CPU µs per text");
        assertEquals(servalMicros, efficiency.serval(), 1e-9);
        assertEquals(1.04, efficiency.value(), 1e-9);
        assertEquals("≤ 1.05", efficiency.goal());
        assertTrue(efficiency.met());
        Goals.Goal batched = find(goals, LoadBenchmark.MINILM_SHORT, "server CPU µs per text");
        assertEquals(1.2, batched.value(), 1e-9);
        assertNull(batched.met(), "reported without a goal outside the default configuration");
    }

    @Test
    void theFp32WorkloadIsHeldToNineTenthsOfTheRawLoopAtItsBestBatchSize() {
        String workload = LoadBenchmark.MINILM_FP32_SHORT;
        List<RunResult> runs = List.of(closed(LoadBenchmark.SERVAL, workload, 1, 300, 4.0),
                closed(LoadBenchmark.SERVAL, workload, 64, 890, 70),
                open(LoadBenchmark.SERVAL, workload, 623, 6, 12.0, Map.of()));
        RawLimits raw = new RawLimits(List.of(), List.of(
                new RawLimits.Rate(RawLimits.DJL, RawEmbeddingLoop.FP32_SHORT, new RawLimits.Split(2, 1), 1, 700, 2800),
                new RawLimits.Rate(RawLimits.DJL, RawEmbeddingLoop.FP32_SHORT, new RawLimits.Split(2, 1), 16, 1000,
                        2000)), List.of());
        Map<String, Object> limits = Map.of("raw", raw, "rawInterleaved", Map.of(workload, Map.of("batch", 16,
                "split", "2x1", "before", 980.0, "after", 1000.0, "limit", 1000.0, "cpuMicrosPerText", 2000.0)));

        List<Goals.Goal> goals = Goals.evaluate(runs, limits);

        Goals.Goal throughput = find(goals, workload, "texts/s at saturation (closed loop)");
        assertEquals(0.89, throughput.value(), 1e-9);
        assertEquals("≥ 0.90", throughput.goal());
        assertFalse(throughput.met());
        assertTrue(throughput.limitName().contains("batch 16"), throughput.limitName());
        assertNull(find(goals, workload, "server CPU µs per text").met()); // reported beside it
        assertEquals(890.0 / 700, find(goals, workload, "texts/s at saturation vs the raw batch-1").value(), 1e-9);
        assertEquals(3.0, find(goals, workload, "p99 at 70 %").value(), 1e-9);
        assertTrue(Goals.evaluate(List.of(closed(LoadBenchmark.SERVAL, workload, 64, 900, 70)), limits).stream()
                .filter(g -> g.figure().startsWith("texts/s at saturation (closed")).findFirst().orElseThrow().met());
    }

    @Test
    void theDefaultConfigurationMustReachTheRawBatchOneLimit() {
        String workload = LoadBenchmark.MINILM_SHORT + "-default";
        List<RunResult> runs = List.of(closed(LoadBenchmark.SERVAL, workload, 64, 370, 80));
        Map<String, Object> limits = Map.of("raw", RawLimitsTest.sample());

        Goals.Goal batch1 = find(Goals.evaluate(runs, limits), workload, "texts/s at saturation vs the raw batch-1");

        assertEquals(370.0 / 401, batch1.value(), 1e-9);
        assertFalse(batch1.met()); // 0.92 < 0.95
    }

    @Test
    void theDefaultConfigurationIsHeldToTheBatchOneLimitsMeasuredAroundIt() {
        String workload = LoadBenchmark.MINILM_SHORT + "-default";
        List<RunResult> runs = List.of(closed(LoadBenchmark.SERVAL, workload, 1, 250, 3.0),
                closed(LoadBenchmark.SERVAL, workload, 64, 370, 80));
        RawLimits.Split twoByOne = new RawLimits.Split(2, 1);
        RawLimits.Split oneByTwo = new RawLimits.Split(1, 2);
        RawLimits around = new RawLimits(List.of(), List.of(
                new RawLimits.Rate(RawLimits.DJL, "short", twoByOne, 1, 360),
                new RawLimits.Rate("python-1.32.0", "short", twoByOne, 1, 380),
                new RawLimits.Rate("python-1.32.0", "short", oneByTwo, 1, 250)), List.of(
                new RawLimits.Single("python-1.32.0", oneByTwo, 2.8, 3.5, 2.9)));
        Map<String, Object> limits = Map.of("cores", 2, "raw", RawLimitsTest.sample(),
                LoadBenchmark.RAW_AROUND_DEFAULT, around);

        List<Goals.Goal> goals = Goals.evaluate(runs, limits);

        List<Goals.Goal> batch1 = goals.stream().filter(g -> g.workload().equals(workload)
                && g.figure().startsWith("texts/s at saturation vs the raw batch-1")).toList();
        assertEquals(2, batch1.size(), batch1.toString());
        Goals.Goal next = batch1.getFirst(); // the goal: against the limit measured next to the run
        assertEquals(370.0 / 380, next.value(), 1e-9);
        assertTrue(next.met());
        assertTrue(next.limitName().contains("just before and after"), next.limitName());
        Goals.Goal sweep = batch1.get(1); // the sweep's, from the start of the run: reported without a goal
        assertEquals(370.0 / 401, sweep.value(), 1e-9);
        assertNull(sweep.met());
        assertTrue(sweep.limitName().contains("in the sweep at the run's start"), sweep.limitName());
        Goals.Goal single = find(goals, workload, "single-request");
        assertEquals(3.0 - 2.8, single.value(), 1e-9); // not the sweep's 3.0
        assertTrue(single.met());
    }

    @Test
    void theDjlLoopIsHeldToPythonAtTheSameVersionAtItsWorstBatchSizePerSplit() {
        List<Goals.Goal> goals = Goals.evaluate(List.of(), Map.of("raw", RawLimitsTest.sample()));

        List<Goals.Goal> raw = goals.stream().filter(g -> g.workload().equals("raw")).toList();
        assertEquals(2, raw.size());
        assertEquals(440.0 / 432, raw.get(0).value(), 1e-9); // 2x1: batch 32 (1.019) is worse than batch 1 (1.053)
        assertTrue(raw.get(0).figure().contains("2x1, worst batch size (32)"), raw.get(0).figure());
        assertTrue(raw.get(0).met());
        assertEquals(250.0 / 295, raw.get(1).value(), 1e-9); // 1x2, batch 1
        assertFalse(raw.get(1).met());
    }

    @Test
    void aPythonLimitThatCouldNotBeMeasuredIsARowWithoutAVerdict() {
        RawLimits sample = RawLimitsTest.sample();
        RawLimits withoutPython = new RawLimits(List.of(RawLimitsTest.DJL, new RawLimits.Runtime("python-1.29.0",
                "Python onnxruntime 1.29.0", "1.29.0", false, "`python3 -m venv` failed")), sample.rates().stream()
                .filter(r -> r.runtime().equals(RawLimits.DJL)).toList(), List.of());

        Goals.Goal row = find(Goals.evaluate(List.of(), Map.of("raw", withoutPython)), "raw", "DJL loop");

        assertTrue(row.limitName().contains("python-1.29.0 NOT MEASURED"), row.limitName());
        assertNull(row.met());
    }
}
