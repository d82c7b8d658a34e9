package dev.serval.bench.load;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.bench.load.RawLimits.Split;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The raw loops of one benchmark run and their sweep: the DJL loop ({@link RawEmbeddingLoop}, a child JVM) and
 * Python onnxruntime ({@link PythonRawLoop}) at the Java runtime's onnxruntime version and at the newest, each a
 * child process that stays up for the whole run and measures on command. {@link #sweep} measures every runtime at
 * every split and batch size of a {@link Plan}, interleaved (batch by batch, split by split, runtime by runtime, in
 * reverse on every other pass, the runtimes' order rotating) so that a drift of the machine falls on all alike, and
 * keeps each configuration's best pass (a disturbance from elsewhere can only lower a figure). A Python runtime that
 * cannot be set up or fails is reported with the reason and left out; the DJL loop failing fails the run.
 *
 * <p>Used by one thread: the benchmark's.
 */
final class RawSweep implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(5);

    /**
     * What the sweep measures.
     *
     * @param splits       the splits of the throughput sweep
     * @param batches      batch sizes on the short texts, every runtime
     * @param batchesMixed batch sizes on the mixed texts, the DJL loop at the first split only (may be empty)
     * @param singleSplits the splits (1 worker each) whose single-text latency is measured, every runtime
     */
    record Plan(List<Split> splits, List<Integer> batches, List<Integer> batchesMixed, List<Split> singleSplits,
            int passes, Duration warmUp, Duration measure, int singleWarmUp, int singleCalls) {

        Plan {
            splits = List.copyOf(splits);
            batches = List.copyOf(batches);
            batchesMixed = List.copyOf(batchesMixed);
            singleSplits = List.copyOf(singleSplits);
            if (splits.isEmpty() || batches.isEmpty() || passes < 1) {
                throw new IllegalArgumentException("a sweep needs a split, a batch size and a pass");
            }
        }

        /**
         * The limits of a batch-invariant server on {@code cores} cores: every runtime at batch 1 at N x 1 and 1 x N
         * (one split on one core), one pass, and the single-text latency at each of {@code singleSplits}.
         */
        static Plan batchOne(int cores, List<Split> singleSplits, Duration warmUp, Duration measure, int singleCalls) {
            List<Split> splits = cores == 1 ? List.of(new Split(1, 1)) : List.of(new Split(cores, 1),
                    new Split(1, cores));
            return new Plan(splits, List.of(1), List.of(), singleSplits, 1, warmUp, measure,
                    Math.max(10, singleCalls / 10), singleCalls);
        }
    }

    /** Every runtime tried, in order; the DJL loop first. */
    private final List<RawLimits.Runtime> runtimes = new ArrayList<>();
    /** The running loops by runtime name; a Python loop that fails is removed. */
    private final Map<String, ChildProcess> loops = new LinkedHashMap<>();

    private RawSweep() {
    }

    /**
     * Starts the DJL loop and, unless {@code python} is null, a Python loop per onnxruntime version from venvs under
     * {@code pythonDir} made with the interpreter {@code python}; {@code started} sees every child process (for the
     * caller's shutdown hook). {@code maxWorkers} is the most workers a split of the sweep will ask for.
     */
    static RawSweep start(String python, Path pythonDir, int maxWorkers, Consumer<ChildProcess> started)
            throws Exception {
        RawSweep sweep = new RawSweep();
        ChildProcess djl = ChildProcess.startJvm(RawEmbeddingLoop.class, List.of());
        started.accept(djl);
        Map<String, Object> ready = JSON.readValue(djl.awaitLine(RawEmbeddingLoop.READY, Duration.ofMinutes(3)),
                new TypeReference<LinkedHashMap<String, Object>>() { });
        String version = String.valueOf(ready.get("onnxruntime"));
        sweep.runtimes.add(new RawLimits.Runtime(RawLimits.DJL, "DJL " + ready.get("djl") + ", ONNX Runtime "
                + version + " under ONNX Runtime Java " + ready.get("onnxruntimeJava") + " (RawEmbeddingLoop)", version,
                true, null));
        sweep.loops.put(RawLimits.DJL, djl);
        if (python == null) {
            sweep.runtimes.add(new RawLimits.Runtime("python", "Python onnxruntime", "", false,
                    "not measured: --no-python"));
            return sweep;
        }
        Path script = PythonRawLoop.writeScript(pythonDir);
        Map<String, Path> texts = Map.of(
                "short", PythonRawLoop.writeTexts(pythonDir, "short", ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED)),
                "mixed", PythonRawLoop.writeTexts(pythonDir, "mixed",
                        ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED)));
        for (String onnxruntime : new LinkedHashSet<>(List.of(version, PythonRawLoop.NEWEST_ONNXRUNTIME))) {
            sweep.startPython(python, pythonDir, onnxruntime, script, texts, maxWorkers, started);
        }
        return sweep;
    }

    /** The runtimes running, in order. */
    List<String> runtimeNames() {
        return List.copyOf(loops.keySet());
    }

    private void startPython(String python, Path dir, String onnxruntime, Path script, Map<String, Path> texts,
            int maxWorkers, Consumer<ChildProcess> started) {
        String name = "python-" + onnxruntime;
        System.out.printf("Python onnxruntime %s: venv in %s...%n", onnxruntime, dir.resolve("onnxruntime-" + onnxruntime));
        PythonRawLoop.Venv venv = PythonRawLoop.prepare(python, dir, onnxruntime);
        if (!venv.ready()) {
            fail(name, "Python onnxruntime " + onnxruntime, onnxruntime, venv.failure());
            return;
        }
        try {
            ChildProcess loop = PythonRawLoop.start(venv, script, texts, maxWorkers);
            started.accept(loop);
            loops.put(name, loop);
            Map<String, Object> ready = JSON.readValue(loop.awaitLine(RawEmbeddingLoop.READY, Duration.ofMinutes(3)),
                    new TypeReference<LinkedHashMap<String, Object>>() { });
            runtimes.add(new RawLimits.Runtime(name, "Python " + ready.get("python") + ", onnxruntime "
                    + ready.get("onnxruntime") + ", tokenizers " + ready.get("tokenizers") + ", numpy "
                    + ready.get("numpy") + (venv.reused() ? " (venv reused)" : " (venv made)"),
                    String.valueOf(ready.get("onnxruntime")), false, null));
        } catch (Exception e) {
            fail(name, "Python onnxruntime " + onnxruntime, onnxruntime, "starting " + PythonRawLoop.SCRIPT
                    + " failed: " + e.getMessage() + " (its standard error is in the benchmark's output)");
        }
    }

    /** Records {@code name} as not measured, says so, and stops its loop if one runs. */
    private void fail(String name, String description, String onnxruntime, String failure) {
        System.out.println("  " + description + " NOT MEASURED: " + failure);
        runtimes.removeIf(r -> r.name().equals(name));
        runtimes.add(new RawLimits.Runtime(name, description, onnxruntime, false, failure));
        ChildProcess loop = loops.remove(name);
        if (loop != null) {
            try {
                loop.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Measures {@code plan}; see the class comment for the order. */
    RawLimits sweep(Plan plan) throws Exception {
        Map<String, RawLimits.Rate> rates = new LinkedHashMap<>();
        Map<String, RawLimits.Single> singles = new LinkedHashMap<>();
        for (int pass = 0; pass < plan.passes(); pass++) {
            List<String> order = new ArrayList<>(loops.keySet());
            Collections.rotate(order, pass);
            for (Split split : plan.singleSplits()) {
                for (String runtime : order) {
                    RawLimits.Single single = single(runtime, split, plan.singleWarmUp(), plan.singleCalls());
                    if (single != null) {
                        singles.merge(runtime + " " + split.label(), single, (a, b) -> a.p50() <= b.p50() ? a : b);
                    }
                }
            }
            List<Integer> batches = new ArrayList<>(plan.batches());
            List<Split> splits = new ArrayList<>(plan.splits());
            if (pass % 2 == 1) {
                Collections.reverse(batches);
                Collections.reverse(splits);
            }
            for (int batch : batches) {
                for (Split split : splits) {
                    for (String runtime : order) {
                        keepBest(rates, measure(runtime, "short", split, batch, plan.warmUp(), plan.measure()));
                    }
                }
            }
            List<Integer> mixed = new ArrayList<>(plan.batchesMixed());
            if (pass % 2 == 1) {
                Collections.reverse(mixed);
            }
            for (int batch : mixed) {
                keepBest(rates, measure(RawLimits.DJL, "mixed", plan.splits().getFirst(), batch, plan.warmUp(),
                        plan.measure()));
            }
        }
        return new RawLimits(runtimes, List.copyOf(rates.values()), List.copyOf(singles.values()));
    }

    /**
     * The DJL loop alone on text set {@code set} at {@code split}, at each of {@code batches}, {@code passes} times
     * (in reverse on every other pass), each batch size keeping its best figures (the higher texts/s and the lower CPU
     * per text of its passes: a disturbance from elsewhere only worsens either): the sweep of a model only the DJL loop
     * runs (the fp32 MiniLM, {@link RawEmbeddingLoop#FP32_SHORT}).
     */
    RawLimits sweepDjl(String set, Split split, List<Integer> batches, int passes, Duration warmUp, Duration measure)
            throws Exception {
        Map<String, RawLimits.Rate> rates = new LinkedHashMap<>();
        for (int pass = 0; pass < passes; pass++) {
            List<Integer> order = new ArrayList<>(batches);
            if (pass % 2 == 1) {
                Collections.reverse(order);
            }
            for (int batch : order) {
                RawLimits.Rate rate = measure(RawLimits.DJL, set, split, batch, warmUp, measure);
                if (rate != null) { // each figure's best pass: the higher texts/s, the lower CPU per text
                    rates.merge(Integer.toString(batch), rate, (x, y) -> new RawLimits.Rate(x.runtime(), x.set(),
                            x.split(), x.batch(), Math.max(x.textsPerSecond(), y.textsPerSecond()),
                            Double.isNaN(x.cpuMicrosPerText()) ? y.cpuMicrosPerText()
                                    : Math.min(x.cpuMicrosPerText(), y.cpuMicrosPerText())));
                }
            }
        }
        return new RawLimits(runtimes, List.copyOf(rates.values()), List.of());
    }

    private static void keepBest(Map<String, RawLimits.Rate> rates, RawLimits.Rate rate) {
        if (rate != null) {
            rates.merge(rate.runtime() + " " + rate.set() + " " + rate.split().label() + " " + rate.batch(), rate,
                    (a, b) -> a.textsPerSecond() >= b.textsPerSecond() ? a : b);
        }
    }

    /** The DJL loop's texts/s and CPU per text: the limit measured around Serval's runs. */
    RawLimits.Rate djlRate(String set, Split split, int batch, Duration warmUp, Duration measure) throws Exception {
        return measure(RawLimits.DJL, set, split, batch, warmUp, measure);
    }

    /** One throughput measurement, or null if {@code runtime}'s loop is (or just went) out. */
    private RawLimits.Rate measure(String runtime, String set, Split split, int batch, Duration warmUp,
            Duration measure) throws Exception {
        Map<String, Object> result = command(runtime, String.format(Locale.ROOT, "measure %s %d %d %d %d %d", set,
                batch, warmUp.toMillis(), measure.toMillis(), split.workers(), split.intraOp()));
        if (result == null) {
            return null;
        }
        double rate = ((Number) result.get("textsPerSecond")).doubleValue();
        double cpu = result.get("cpuMicrosPerText") instanceof Number micros ? micros.doubleValue() : Double.NaN;
        System.out.printf(Locale.ROOT, "  raw %-14s %-5s %-4s batch %-3d %8.1f texts/s%s%n", runtime, set,
                split.label(), batch, rate, Double.isNaN(cpu) ? "" : String.format(Locale.ROOT, ", %.0f µs CPU/text",
                        cpu));
        return new RawLimits.Rate(runtime, set, split, batch, rate, cpu);
    }

    private RawLimits.Single single(String runtime, Split split, int warmUp, int calls) throws Exception {
        Map<String, Object> result = command(runtime, String.format(Locale.ROOT, "single short %d %d %d", warmUp, calls,
                split.intraOp()));
        if (result == null) {
            return null;
        }
        RawLimits.Single single = new RawLimits.Single(runtime, split, number(result, "p50"), number(result, "p99"),
                number(result, "mean"));
        System.out.printf(Locale.ROOT, "  raw %-14s single text %-4s p50 %.3f ms, p99 %.3f ms%n", runtime, split.label(),
                single.p50(), single.p99());
        return single;
    }

    private static double number(Map<String, Object> result, String key) {
        return ((Number) result.get(key)).doubleValue();
    }

    /**
     * Sends {@code command} to {@code runtime}'s loop and returns its answer; null if that loop is not running or is a
     * Python loop that failed now (then recorded as failed). A failure of the DJL loop is thrown.
     */
    private Map<String, Object> command(String runtime, String command) throws Exception {
        ChildProcess loop = loops.get(runtime);
        if (loop == null) {
            return null;
        }
        try {
            loop.send(command);
            return parseResult(loop.awaitLine(RawEmbeddingLoop.RESULT, COMMAND_TIMEOUT));
        } catch (IOException | IllegalStateException e) {
            if (runtime.equals(RawLimits.DJL)) {
                throw e;
            }
            RawLimits.Runtime failed = runtimes.stream().filter(r -> r.name().equals(runtime)).findFirst().orElseThrow();
            fail(runtime, failed.description(), failed.onnxruntime(), "failed during the sweep on `" + command + "`: "
                    + e.getMessage());
            return null;
        }
    }

    /** A {@code RESULT} line's JSON (the text after the marker). */
    static Map<String, Object> parseResult(String json) throws IOException {
        return JSON.readValue(json, new TypeReference<LinkedHashMap<String, Object>>() { });
    }

    /** Stops every loop ({@code quit}, then SIGTERM). */
    @Override
    public void close() throws InterruptedException {
        for (ChildProcess loop : loops.values()) {
            try {
                loop.send("quit");
            } catch (IOException e) {
                // already gone
            }
            loop.close();
        }
        loops.clear();
    }
}
