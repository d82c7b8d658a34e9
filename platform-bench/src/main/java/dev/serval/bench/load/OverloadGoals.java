package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.List;

/**
 * The overload goals of issue 14, evaluated on the figures of one offered multiple of capacity C: pure functions
 * over numbers, so that the verdicts can be tested without a server. Stateless.
 *
 * <ul>
 *   <li>goodput (texts/s answered 200) &ge; 0.85 &times; C;</li>
 *   <li>every refusal is 429 or 503 with a {@code Retry-After} header: no other status, no answer without the
 *       header;</li>
 *   <li>and every request gets an HTTP answer: no connection error, timeout or request left unanswered (a dropped
 *       connection is a refusal without {@code Retry-After}, and a worse one);</li>
 *   <li>refusal p99 &lt; 20 ms (from the intended send time);</li>
 *   <li>admitted requests' p99 &le; the queue's bound: the requests that can be ahead of an admitted one
 *       ({@code max_queued_requests} in the deployment's queue plus {@code max_ongoing_requests} per replica inside
 *       the replicas) served at rate C, plus one request served alone ({@link #admittedBoundMillis}).</li>
 * </ul>
 * The issue sets them at 10 &times; C ({@link #GOAL_MULTIPLE}); the report evaluates them at every multiple.
 */
final class OverloadGoals {

    /** The offered multiple of C at which the issue sets its goals. */
    static final double GOAL_MULTIPLE = 10;
    static final double MIN_GOODPUT_RATIO = 0.85;
    static final double MAX_REFUSAL_P99_MILLIS = 20;

    private OverloadGoals() {
    }

    /**
     * One offered multiple's figures.
     *
     * @param multiple      offered load / C
     * @param goodput       texts/s answered 200 inside the window
     * @param refusals      non-200 answers inside the window
     * @param improper      non-200 answers other than 429/503 with Retry-After
     * @param unanswered    requests with no HTTP answer (connection errors, timeouts, unfinished)
     * @param refusalP99    ms from intended start; NaN when there was no refusal
     * @param admittedP99   ms from intended start of the 200 answers; NaN when none
     */
    record Point(double multiple, double goodput, long refusals, long improper, long unanswered, double refusalP99,
            double admittedP99) {

        static Point of(double multiple, RunResult run) {
            return new Point(multiple, run.throughput(), run.refusals().count(), run.refusals().improper(),
                    run.unanswered(), run.refusals().p99(), run.p99());
        }
    }

    /**
     * One goal at one multiple.
     *
     * @param value the figure: a ratio to C, a count, or milliseconds
     * @param limit what it is held to, in the same unit
     * @param goal  the goal as text
     * @param met   whether it holds
     */
    record Verdict(double multiple, String figure, double value, double limit, String goal, boolean met) {
    }

    /**
     * The longest an admitted request should take: {@code (maxQueued + maxOngoingPerReplica x replicas) / capacity}
     * seconds of waiting behind the requests admitted before it, plus {@code singleMillis}, one request served alone.
     */
    static double admittedBoundMillis(int maxQueued, int maxOngoingPerReplica, int replicas, double capacity,
            double singleMillis) {
        return (maxQueued + (double) maxOngoingPerReplica * replicas) / capacity * 1000 + singleMillis;
    }

    /** The five goals at {@code point}, against capacity {@code capacity} (texts/s) and {@code boundMillis}. */
    static List<Verdict> evaluate(Point point, double capacity, double boundMillis) {
        List<Verdict> verdicts = new ArrayList<>();
        double ratio = point.goodput() / capacity;
        verdicts.add(new Verdict(point.multiple(), "goodput / C", ratio, MIN_GOODPUT_RATIO,
                String.format("≥ %.2f", MIN_GOODPUT_RATIO), ratio >= MIN_GOODPUT_RATIO));
        verdicts.add(new Verdict(point.multiple(), "refusals not 429/503 with Retry-After", point.improper(), 0, "= 0",
                point.improper() == 0));
        verdicts.add(new Verdict(point.multiple(), "requests without an HTTP answer", point.unanswered(), 0, "= 0",
                point.unanswered() == 0));
        // No refusal at all is no slow refusal.
        boolean refusalsFast = point.refusals() == 0 || point.refusalP99() < MAX_REFUSAL_P99_MILLIS;
        verdicts.add(new Verdict(point.multiple(), "refusal p99 (ms)", point.refusalP99(), MAX_REFUSAL_P99_MILLIS,
                String.format("< %.0f ms", MAX_REFUSAL_P99_MILLIS), refusalsFast));
        verdicts.add(new Verdict(point.multiple(), "admitted p99 (ms)", point.admittedP99(), boundMillis,
                String.format("≤ %.1f ms (bound)", boundMillis), point.admittedP99() <= boundMillis));
        return verdicts;
    }

    /** Whether every verdict holds. */
    static boolean allMet(List<Verdict> verdicts) {
        return verdicts.stream().allMatch(Verdict::met);
    }
}
