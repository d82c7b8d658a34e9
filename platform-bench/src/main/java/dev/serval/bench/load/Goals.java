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
 *   <li>noop: Serval's saturation throughput &ge; 60 % of the bare server's; at half of Serval's saturation
 *       rate (open loop, the bare server at the same rate), p50 overhead &le; 0.2 ms and p99 overhead &le; 1 ms.</li>
 *   <li>MiniLM short texts: Serval's saturation texts/s &ge; 95 % of the raw loop's at its best batch size (which
 *       Serval is configured with; the raw loop is measured just before and just after Serval's closed loops, and
 *       the better of the two is the limit); p99 at 70 % of saturation &le; 3 &times; the single-request latency (p50
 *       of one closed-loop connection).</li>
 *   <li>No errors in any open-loop run below saturation.</li>
 * </ul>
 * The mixed-text and default-configuration figures are reported the same way, without a goal.
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

    static List<Goal> evaluate(List<RunResult> runs, Map<String, Object> limits) {
        List<Goal> goals = new ArrayList<>();
        String noop = LoadBenchmark.NOOP;
        if (has(runs, noop)) {
            double serval = saturation(runs, LoadBenchmark.SERVAL, noop);
            double bare = saturation(runs, LoadBenchmark.BARE, noop);
            goals.add(ratio(noop, "req/s at saturation (closed loop)", serval, "bare Vert.x server", bare, 0.60));
            Optional<RunResult> servalHalf = openAt(runs, LoadBenchmark.SERVAL, noop, 0.5, serval);
            Optional<RunResult> bareHalf = openAt(runs, LoadBenchmark.BARE, noop, 0.5, serval);
            if (servalHalf.isPresent() && bareHalf.isPresent()) {
                goals.add(overhead(noop, "p50 at 50 % of Serval's saturation", servalHalf.get().p50(),
                        bareHalf.get().p50(), 0.2));
                goals.add(overhead(noop, "p99 at 50 % of Serval's saturation", servalHalf.get().p99(),
                        bareHalf.get().p99(), 1.0));
            }
        }
        for (String workload : List.of(LoadBenchmark.MINILM_SHORT, LoadBenchmark.MINILM_MIXED,
                LoadBenchmark.MINILM_SHORT + "-default")) {
            if (!has(runs, workload)) {
                continue;
            }
            boolean goal = workload.equals(LoadBenchmark.MINILM_SHORT);
            double serval = saturation(runs, LoadBenchmark.SERVAL, workload);
            Map<String, Object> raw = rawInterleaved(limits, workload);
            if (raw != null) {
                goals.add(ratio(workload, "texts/s at saturation (closed loop)", serval, "raw DJL loop, batch "
                        + raw.get("batch") + " (best of just before and after)", ((Number) raw.get("limit")).doubleValue(),
                        goal ? 0.95 : Double.NaN));
            }
            Optional<RunResult> single = runs.stream().filter(r -> r.target().equals(LoadBenchmark.SERVAL)
                    && r.workload().equals(workload) && r.mode().equals("closed") && r.connections() == 1).findFirst();
            Optional<RunResult> at70 = openAt(runs, LoadBenchmark.SERVAL, workload, 0.7, serval);
            if (single.isPresent() && at70.isPresent()) {
                double p99 = at70.get().p99();
                double alone = single.get().p50();
                goals.add(new Goal(workload, "p99 at 70 % of saturation", p99, "single-request p50 (1 connection)",
                        alone, "ratio", p99 / alone, goal ? "≤ 3" : "", goal ? (Double.isNaN(p99) ? null : p99 / alone <= 3)
                        : null));
            }
        }
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

    private static Goal ratio(String workload, String figure, double serval, String limitName, double limit,
            double atLeast) {
        double ratio = serval / limit;
        boolean goal = !Double.isNaN(atLeast);
        return new Goal(workload, figure, serval, limitName, limit, "ratio", ratio,
                goal ? String.format("≥ %.2f", atLeast) : "", goal ? (Double.isNaN(ratio) ? null : ratio >= atLeast) : null);
    }

    private static Goal overhead(String workload, String figure, double serval, double bare, double atMost) {
        double overhead = serval - bare;
        return new Goal(workload, figure, serval, "bare Vert.x server, same rate", bare, "overhead ms", overhead,
                String.format("≤ %.1f ms", atMost), Double.isNaN(overhead) ? null : overhead <= atMost);
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
