package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The goals, evaluated on one run's figures: every Serval figure next to its limit measured in the same
 * run, as a ratio (or, for latency, an overhead in milliseconds). Stateless.
 *
 * <ul>
 *   <li>noop: Serval's saturation throughput &ge; 70 % of the bare server's; single-request overhead (Serval's p50
 *       minus the bare server's, 1 connection) &le; 0.05 ms; at half of Serval's saturation rate (open loop, the bare
 *       server at the same rate), p50 overhead &le; 0.2 ms and p99 overhead &le; 1 ms.</li>
 *   <li>The raw loops ({@link RawLimits}): the DJL loop's texts/s &ge; 98 % of Python onnxruntime's at the same
 *       onnxruntime version, split and batch size (the worst batch size of each split is the row).</li>
 *   <li>MiniLM short texts: Serval's saturation texts/s &ge; 95 % of the raw DJL loop's at Serval's batch size (the
 *       DJL loop's best at Serval's split, which Serval is configured with; measured just before and just after
 *       Serval's closed loops, the better of the two is the limit); Serval's default configuration (batch-invariant:
 *       {@code minilm-short-default}, or {@code minilm-short} itself when its batch size is 1) &ge; 95 % of the best
 *       raw batch-1 figure of any runtime and split; the single-request p50 (1 connection) at most 0.3 ms over the
 *       fastest raw single-text p50 with all cores on one text (1 worker x N threads); for
 *       {@code minilm-short-default} both limits are the ones measured just before and after it
 *       ({@link LoadBenchmark#RAW_AROUND_DEFAULT}, the better of the two), the sweep's reported beside them without a
 *       goal; p99 at 70 % of saturation
 *       &le; 3 &times; the single-request p50. Serval against the best raw figure at any batch size is reported
 *       without a goal.</li>
 *   <li>Efficiency, every MiniLM workload: Serval's server process CPU per text at saturation over the raw DJL loop's
 *       process CPU per text at Serval's batch size and split, measured around it; &le; 1.05 in the default
 *       configuration, reported for the others.</li>
 *   <li>The fp32 MiniLM ({@code minilm-fp32-short}, batched as shipped): Serval's saturation texts/s &ge; 90 % of the
 *       raw DJL loop over length-sorted batches of that model at its best batch size at Serval's split (found by the
 *       run's sweep, measured again just before and just after Serval's closed loops, the better of the two); beside
 *       it, without a goal, the efficiency row as above, Serval against the sweep's batch-1 figure (what batching
 *       buys) and its p99 at 70 % of saturation over its single-request p50.</li>
 *   <li>No errors in any open-loop run below saturation.</li>
 * </ul>
 * The mixed-text figures are reported the same way, without a goal.
 */
final class Goals {

    private Goals() {
    }

    /**
     * One row of the goals table.
     *
     * @param serval the Serval figure (req/s or ms)
     * @param limit  the limit or reference it is compared with, in the same unit
     * @param value  the ratio serval / limit, or the overhead serval - limit (ms), as {@code relation} says
     * @param goal   the goal as text ("≥ 0.60"), or "" when the row only reports
     * @param met    whether the goal is met; null without a goal or when a figure is missing
     */
    record Goal(String workload, String figure, double serval, String limitName, double limit, String relation,
            double value, String goal, Boolean met) {
    }

    /**
     * The goals of {@code runs} against {@code limits}: the raw DJL loop measured around each text workload
     * ({@code rawInterleaved}), the raw loops' sweep ({@code raw}, a {@link RawLimits}) and the cores the raw
     * single-text latency used ({@code cores}).
     */
    static List<Goal> evaluate(List<RunResult> runs, Map<String, Object> limits) {
        List<Goal> goals = new ArrayList<>();
        RawLimits raw = limits.get("raw") instanceof RawLimits measured ? measured : RawLimits.none();
        int cores = limits.get("cores") instanceof Integer n ? n : Runtime.getRuntime().availableProcessors();
        String noop = LoadBenchmark.NOOP;
        if (has(runs, noop)) {
            double serval = saturation(runs, LoadBenchmark.SERVAL, noop);
            // The bare server's better configuration: Vert.x's default event loops or Serval's (fewer).
            double bare = saturation(runs, LoadBenchmark.BARE, noop);
            double bareServalLoops = saturation(runs, LoadBenchmark.BARE_SERVAL_LOOPS, noop);
            goals.add(ratio(noop, "req/s at saturation (closed loop)", serval, bareServalLoops > bare
                    ? "bare Vert.x server, Serval's event loops" : "bare Vert.x server",
                    Double.isNaN(bareServalLoops) ? bare : Math.max(bare, bareServalLoops), 0.70));
            Optional<RunResult> servalOne = closedAt(runs, LoadBenchmark.SERVAL, noop, 1);
            Optional<RunResult> bareOne = closedAt(runs, LoadBenchmark.BARE, noop, 1);
            if (servalOne.isPresent() && bareOne.isPresent()) {
                goals.add(overhead(noop, "single-request p50 (1 connection)", servalOne.get().p50(),
                        "bare Vert.x server, 1 connection", bareOne.get().p50(), 0.05));
            }
            Optional<RunResult> servalHalf = openAt(runs, LoadBenchmark.SERVAL, noop, 0.5, serval);
            Optional<RunResult> bareHalf = openAt(runs, LoadBenchmark.BARE, noop, 0.5, serval);
            if (servalHalf.isPresent() && bareHalf.isPresent()) {
                goals.add(overhead(noop, "p50 at 50 % of Serval's saturation", servalHalf.get().p50(),
                        "bare Vert.x server, same rate", bareHalf.get().p50(), 0.2));
                goals.add(overhead(noop, "p99 at 50 % of Serval's saturation", servalHalf.get().p99(),
                        "bare Vert.x server, same rate", bareHalf.get().p99(), 1.0));
            }
        }
        javaAgainstPython(goals, raw);
        for (String workload : List.of(LoadBenchmark.MINILM_SHORT, LoadBenchmark.MINILM_MIXED,
                LoadBenchmark.MINILM_SHORT + "-default")) {
            if (!has(runs, workload)) {
                continue;
            }
            boolean goal = !workload.equals(LoadBenchmark.MINILM_MIXED);
            String set = goal ? "short" : "mixed";
            double serval = saturation(runs, LoadBenchmark.SERVAL, workload);
            Map<String, Object> interleaved = rawInterleaved(limits, workload);
            int batch = interleaved == null ? 0 : ((Number) interleaved.get("batch")).intValue();
            if (interleaved != null) {
                goals.add(ratio(workload, "texts/s at saturation (closed loop)", serval, "raw DJL loop "
                        + interleaved.getOrDefault("split", "") + ", batch " + batch
                        + " (best of just before and after)", ((Number) interleaved.get("limit")).doubleValue(),
                        workload.equals(LoadBenchmark.MINILM_SHORT) ? 0.95 : Double.NaN));
            }
            boolean defaultConfiguration = workload.equals(LoadBenchmark.MINILM_SHORT + "-default")
                    || (workload.equals(LoadBenchmark.MINILM_SHORT) && batch == 1);
            if (interleaved != null && interleaved.get("cpuMicrosPerText") instanceof Number rawCpu) {
                Optional<RunResult> saturated = saturated(runs, workload);
                if (saturated.isPresent()) {
                    double servalCpu = MachineUsage.microsPerRequest(saturated.get().cpu().server(),
                            saturated.get().throughput());
                    goals.add(efficiency(workload, servalCpu, "raw DJL loop " + interleaved.getOrDefault("split", "")
                            + ", batch " + batch + ", its process CPU", rawCpu.doubleValue(),
                            defaultConfiguration ? 1.05 : Double.NaN));
                }
            }
            // The default configuration's own run has its batch-1 limits measured just before and after it; without
            // them (or for another workload) the sweep's, from the start of the run.
            RawLimits around = workload.equals(LoadBenchmark.MINILM_SHORT + "-default")
                    && limits.get(LoadBenchmark.RAW_AROUND_DEFAULT) instanceof RawLimits measured ? measured : null;
            if (around != null) {
                around.bestAt(set, 1).ifPresent(best -> goals.add(ratio(workload, "texts/s at saturation vs the raw "
                        + "batch-1 limit", serval, "best raw batch 1 (best of just before and after): "
                        + describe(best), best.textsPerSecond(), 0.95)));
            }
            raw.bestAt(set, 1).ifPresent(best -> goals.add(ratio(workload, "texts/s at saturation vs the raw batch-1 "
                    + "limit", serval, "best raw batch 1" + (around == null ? "" : " in the sweep at the run's start")
                    + ": " + describe(best), best.textsPerSecond(),
                    defaultConfiguration && around == null ? 0.95 : Double.NaN)));
            raw.best(set).ifPresent(best -> goals.add(ratio(workload, "texts/s at saturation vs the raw limit", serval,
                    "best raw figure: " + describe(best), best.textsPerSecond(), Double.NaN)));
            Optional<RunResult> single = closedAt(runs, LoadBenchmark.SERVAL, workload, 1);
            Optional<RawLimits.Single> rawSingle = (around == null ? raw : around).fastestSingle(cores);
            if (goal && single.isPresent() && rawSingle.isPresent()) { // the raw latency is measured on short texts
                RawLimits.Single fastest = rawSingle.get();
                goals.add(overhead(workload, "single-request p50 (1 connection)", single.get().p50(), "fastest raw "
                        + "single-text p50" + (around == null ? "" : " (best of just before and after)") + ": "
                        + fastest.runtime() + " " + fastest.split().label(), fastest.p50(), 0.3));
            }
            Optional<RunResult> at70 = openAt(runs, LoadBenchmark.SERVAL, workload, 0.7, serval);
            if (single.isPresent() && at70.isPresent()) {
                double p99 = at70.get().p99();
                double alone = single.get().p50();
                boolean tailGoal = workload.equals(LoadBenchmark.MINILM_SHORT);
                goals.add(new Goal(workload, "p99 at 70 % of saturation", p99, "single-request p50 (1 connection)",
                        alone, "ratio", p99 / alone, tailGoal ? "≤ 3" : "",
                        tailGoal ? (Double.isNaN(p99) ? null : p99 / alone <= 3) : null));
            }
        }
        fp32(goals, runs, limits, raw);
        long errors = 0;
        int belowSaturation = 0;
        for (RunResult run : runs) {
            if (run.mode().equals("open")) {
                double saturation = saturation(runs, LoadBenchmark.SERVAL, run.workload());
                if (run.offeredRate() < saturation * 0.999) {
                    belowSaturation++;
                    errors += run.errorCount();
                }
            }
        }
        if (belowSaturation > 0) {
            goals.add(new Goal("all", "errors in the " + belowSaturation + " open-loop runs below saturation", errors,
                    "", 0, "count", errors, "= 0", errors == 0));
        }
        return goals;
    }

    /** The fp32 workload's rows: see the class comment. */
    private static void fp32(List<Goal> goals, List<RunResult> runs, Map<String, Object> limits, RawLimits raw) {
        String workload = LoadBenchmark.MINILM_FP32_SHORT;
        if (!has(runs, workload)) {
            return;
        }
        double serval = saturation(runs, LoadBenchmark.SERVAL, workload);
        Map<String, Object> interleaved = rawInterleaved(limits, workload);
        if (interleaved != null) {
            int batch = ((Number) interleaved.get("batch")).intValue();
            String limitName = "raw DJL loop, fp32, " + interleaved.getOrDefault("split", "") + ", batch " + batch
                    + " (its best in the sweep; best of just before and after)";
            goals.add(ratio(workload, "texts/s at saturation (closed loop)", serval, limitName,
                    ((Number) interleaved.get("limit")).doubleValue(), 0.9));
            Optional<RunResult> saturated = saturated(runs, workload);
            if (interleaved.get("cpuMicrosPerText") instanceof Number rawCpu && saturated.isPresent()) {
                goals.add(efficiency(workload, MachineUsage.microsPerRequest(saturated.get().cpu().server(),
                        saturated.get().throughput()), "raw DJL loop, fp32, " + interleaved.getOrDefault("split", "")
                        + ", batch " + batch + ", its process CPU", rawCpu.doubleValue(), Double.NaN));
            }
        }
        raw.bestAt(RawEmbeddingLoop.FP32_SHORT, 1).ifPresent(one -> goals.add(ratio(workload, "texts/s at saturation "
                + "vs the raw batch-1 figure", serval, "raw DJL loop, fp32, " + one.split().label() + ", batch 1 "
                + "(sweep)", one.textsPerSecond(), Double.NaN)));
        Optional<RunResult> single = closedAt(runs, LoadBenchmark.SERVAL, workload, 1);
        Optional<RunResult> at70 = openAt(runs, LoadBenchmark.SERVAL, workload, 0.7, serval);
        if (single.isPresent() && at70.isPresent()) {
            goals.add(new Goal(workload, "p99 at 70 % of saturation", at70.get().p99(), "single-request p50 "
                    + "(1 connection)", single.get().p50(), "ratio", at70.get().p99() / single.get().p50(), "", null));
        }
    }

    private static Goal ratio(String workload, String figure, double serval, String limitName, double limit,
            double atLeast) {
        double ratio = serval / limit;
        boolean goal = !Double.isNaN(atLeast);
        return new Goal(workload, figure, serval, limitName, limit, "ratio", ratio,
                goal ? String.format("≥ %.2f", atLeast) : "", goal ? (Double.isNaN(ratio) ? null : ratio >= atLeast) : null);
    }

    /** The DJL loop over Python at the same onnxruntime version: per split, its worst batch size. */
    private static void javaAgainstPython(List<Goal> goals, RawLimits raw) {
        List<RawLimits.Ratio> ratios = raw.javaOverPython("short");
        if (ratios.isEmpty()) {
            Optional<RawLimits.Runtime> java = raw.runtimes().stream().filter(RawLimits.Runtime::java).findFirst();
            Optional<RawLimits.Runtime> missing = raw.runtimes().stream().filter(r -> !r.java() && !r.measured()
                    && (r.onnxruntime().isEmpty() || java.map(j -> j.onnxruntime().equals(r.onnxruntime())).orElse(true)))
                    .findFirst();
            missing.ifPresent(python -> goals.add(new Goal("raw", "DJL loop texts/s against Python at the same "
                    + "onnxruntime version", Double.NaN, python.name() + " NOT MEASURED (see \"The limit\")", Double.NaN,
                    "ratio", Double.NaN, "≥ 0.98", null)));
            return;
        }
        String python = raw.pythonAtJavaVersion().orElseThrow().name();
        for (RawLimits.Split split : ratios.stream().map(RawLimits.Ratio::split).distinct().toList()) {
            RawLimits.Ratio worst = ratios.stream().filter(r -> r.split().equals(split))
                    .min(Comparator.comparingDouble(RawLimits.Ratio::ratio)).orElseThrow();
            goals.add(new Goal("raw", "DJL loop texts/s, " + split.label() + ", worst batch size (" + worst.batch() + ")",
                    worst.java(), python + ", same split and batch", worst.python(), "ratio", worst.ratio(),
                    "≥ 0.98", worst.ratio() >= 0.98));
        }
    }

    private static String describe(RawLimits.Rate rate) {
        return rate.runtime() + " " + rate.split().label() + " batch " + rate.batch();
    }

    /**
     * The efficiency row: Serval's server process CPU per text at saturation (the load generator's excluded) over the
     * raw loop's process CPU per text at the same batch size and split, both in microseconds; lower is better, no goal
     * when {@code atMost} is NaN.
     */
    private static Goal efficiency(String workload, double serval, String limitName, double limit, double atMost) {
        double ratio = serval / limit;
        boolean goal = !Double.isNaN(atMost);
        return new Goal(workload, "server CPU µs per text at saturation", serval, limitName, limit, "ratio", ratio,
                goal ? String.format(java.util.Locale.ROOT, "≤ %.2f", atMost) : "",
                goal && !Double.isNaN(ratio) ? ratio <= atMost : null);
    }

    /** {@code workload}'s closed-loop run on Serval with the highest throughput: its saturation. */
    private static Optional<RunResult> saturated(List<RunResult> runs, String workload) {
        return runs.stream().filter(r -> r.target().equals(LoadBenchmark.SERVAL) && r.workload().equals(workload)
                && r.mode().equals("closed")).max(Comparator.comparingDouble(RunResult::throughput));
    }

    /** A latency overhead row; no goal when {@code atMost} is NaN. */
    private static Goal overhead(String workload, String figure, double serval, String limitName, double limit,
            double atMost) {
        double overhead = serval - limit;
        boolean goal = !Double.isNaN(atMost);
        return new Goal(workload, figure, serval, limitName, limit, "overhead ms", overhead,
                goal ? String.format(java.util.Locale.ROOT, "≤ %s ms", atMost) : "",
                goal && !Double.isNaN(overhead) ? overhead <= atMost : null);
    }

    /** {@code target}'s closed-loop run on {@code workload} with {@code connections} connections. */
    private static Optional<RunResult> closedAt(List<RunResult> runs, String target, String workload, int connections) {
        return runs.stream().filter(r -> r.target().equals(target) && r.workload().equals(workload)
                && r.mode().equals("closed") && r.connections() == connections).findFirst();
    }

    private static boolean has(List<RunResult> runs, String workload) {
        return runs.stream().anyMatch(r -> r.workload().equals(workload) && r.target().equals(LoadBenchmark.SERVAL));
    }

    /** The highest closed-loop throughput of {@code target} on {@code workload}; NaN if it has none. */
    static double saturation(List<RunResult> runs, String target, String workload) {
        return runs.stream().filter(r -> r.target().equals(target) && r.workload().equals(workload)
                        && r.mode().equals("closed"))
                .mapToDouble(RunResult::throughput).max().orElse(Double.NaN);
    }

    /** The open-loop run offered at {@code fraction} of {@code saturation}. */
    static Optional<RunResult> openAt(List<RunResult> runs, String target, String workload, double fraction,
            double saturation) {
        return runs.stream().filter(r -> r.target().equals(target) && r.workload().equals(workload)
                        && r.mode().equals("open"))
                .min(Comparator.comparingDouble(r -> Math.abs(r.offeredRate() - fraction * saturation)))
                .filter(r -> Math.abs(r.offeredRate() - fraction * saturation) <= 0.01 * saturation);
    }

    /** The raw loop's texts/s measured around {@code workload}'s closed loops, or null. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> rawInterleaved(Map<String, Object> limits, String workload) {
        Object interleaved = limits.get("rawInterleaved");
        return interleaved == null ? null : (Map<String, Object>) ((Map<String, Object>) interleaved).get(workload);
    }
}
