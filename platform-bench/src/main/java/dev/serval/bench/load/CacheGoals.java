package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The goals of issue 41 (the result cache), evaluated on the figures of one run: pure functions over numbers, so
 * that the verdicts can be tested without a server. Stateless.
 *
 * <ul>
 *   <li>Zipf traffic at saturation: throughput with the cache on &ge; {@value #MIN_ZIPF_RATIO} &times; the same
 *       requests with the cache off;</li>
 *   <li>unique traffic (no text twice) at saturation: with the cache on &ge; {@value #MIN_UNIQUE_RATIO} &times; off;</li>
 *   <li>a fully cached request's p50 (1 connection) at most {@value #MAX_CACHED_OVER_NOOP_MILLIS} ms over the no-op
 *       model's p50 on the same server.</li>
 * </ul>
 * Every round measures each pair one after the other, so each figure is taken per round, from one stretch of time, and
 * the goal holds the median of the rounds' figures (one disturbed round of a few does not decide). Two checks say
 * whether the runs measured what they claim: the unique runs found nothing in the cache, and the fully cached runs
 * missed nothing. The single-connection ratios, and the server's CPU per request at saturation (on over off: what the
 * cache saves, less disturbed by the rest of a shared machine than a rate), are reported without a goal.
 */
final class CacheGoals {

    static final double MIN_ZIPF_RATIO = 3;
    static final double MIN_UNIQUE_RATIO = 0.98;
    static final double MAX_CACHED_OVER_NOOP_MILLIS = 0.05;

    private CacheGoals() {
    }

    /** Requests per second with the cache on and off, on the same requests in the same round. */
    record Pair(double on, double off) {

        double ratio() {
            return on / off;
        }
    }

    /**
     * One round's figures; NaN (or -1 for a count) where a run is missing or its scrape failed.
     *
     * @param zipf          Zipf traffic at saturation, req/s
     * @param unique        unique traffic at saturation, req/s
     * @param zipfSingle    Zipf traffic at 1 connection, req/s
     * @param uniqueSingle  unique traffic at 1 connection, req/s
     * @param zipfCpu       Zipf traffic at saturation, the server process's CPU per request, µs
     * @param uniqueCpu     unique traffic at saturation, the same
     * @param cachedP50     ms, a fully cached text per request, 1 connection, cache on
     * @param noopP50       ms, the no-op model, 1 connection, same server
     * @param uniqueHits    cache hits and coalesced lookups during the round's unique runs on the cache-on server
     * @param cachedMisses  cache misses during the round's fully cached run
     */
    record Round(Pair zipf, Pair unique, Pair zipfSingle, Pair uniqueSingle, Pair zipfCpu, Pair uniqueCpu,
            double cachedP50, double noopP50, long uniqueHits, long cachedMisses) {
    }

    /** The goals and checks over {@code rounds}, saturation meaning {@code connections} connections. */
    static List<Goals.Goal> evaluate(List<Round> rounds, int connections) {
        List<Goals.Goal> goals = new ArrayList<>();
        String saturation = "req/s at saturation (" + connections + " connections), cache on";
        goals.add(ratio("zipf", saturation, rounds, Round::zipf, MIN_ZIPF_RATIO));
        goals.add(ratio("unique", saturation, rounds, Round::unique, MIN_UNIQUE_RATIO));
        double overhead = median(rounds, r -> r.cachedP50() - r.noopP50());
        goals.add(new Goals.Goal("cached", "p50 of a fully cached text (1 connection)", median(rounds, Round::cachedP50),
                "no-op model, 1 connection, same server", median(rounds, Round::noopP50), "overhead ms", overhead,
                String.format(Locale.ROOT, "≤ %.2f ms", MAX_CACHED_OVER_NOOP_MILLIS),
                Double.isNaN(overhead) ? null : overhead <= MAX_CACHED_OVER_NOOP_MILLIS));
        goals.add(ratio("zipf", "req/s at 1 connection, cache on", rounds, Round::zipfSingle, Double.NaN));
        goals.add(ratio("unique", "req/s at 1 connection, cache on", rounds, Round::uniqueSingle, Double.NaN));
        // The server's own CPU per request: what the cache saves, whatever else the shared machine was running.
        String cpu = "server CPU µs per request at saturation, cache on";
        goals.add(ratio("zipf", cpu, rounds, Round::zipfCpu, Double.NaN));
        goals.add(ratio("unique", cpu, rounds, Round::uniqueCpu, Double.NaN));
        goals.add(count("unique", "texts found in the cache in the unique runs (check)",
                rounds.stream().mapToLong(Round::uniqueHits).toArray()));
        goals.add(count("cached", "cache misses in the fully cached runs (check)",
                rounds.stream().mapToLong(Round::cachedMisses).toArray()));
        return goals;
    }

    /** Whether every goal with a verdict holds and none is missing its verdict. */
    static boolean allMet(List<Goals.Goal> goals) {
        return goals.stream().filter(g -> !g.goal().isEmpty()).allMatch(g -> Boolean.TRUE.equals(g.met()));
    }

    /** The median of the rounds' on/off ratios against {@code atLeast}; a row without a goal when it is NaN. */
    private static Goals.Goal ratio(String workload, String figure, List<Round> rounds, Function<Round, Pair> pair,
            double atLeast) {
        double ratio = median(rounds, r -> pair.apply(r).ratio());
        boolean goal = !Double.isNaN(atLeast);
        return new Goals.Goal(workload, figure, median(rounds, r -> pair.apply(r).on()), "cache off, same requests",
                median(rounds, r -> pair.apply(r).off()), "ratio", ratio,
                goal ? String.format(Locale.ROOT, "≥ %.2f", atLeast) : "",
                goal && !Double.isNaN(ratio) ? ratio >= atLeast : null);
    }

    /** A check that a count is 0 over the rounds; no verdict when a round's count is unknown (negative). */
    private static Goals.Goal count(String workload, String figure, long[] counts) {
        boolean known = counts.length > 0 && Arrays.stream(counts).allMatch(c -> c >= 0);
        long sum = Arrays.stream(counts).filter(c -> c >= 0).sum();
        return new Goals.Goal(workload, figure, sum, "", Double.NaN, "count", known ? sum : Double.NaN, "= 0",
                known ? sum == 0 : null);
    }

    /** The median of a figure over the rounds where it is known (not NaN); NaN when it is known in none. */
    static double median(List<Round> rounds, ToDoubleFunction<Round> figure) {
        double[] values = rounds.stream().mapToDouble(figure).filter(v -> !Double.isNaN(v)).sorted().toArray();
        if (values.length == 0) {
            return Double.NaN;
        }
        int middle = values.length / 2;
        return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }
}
