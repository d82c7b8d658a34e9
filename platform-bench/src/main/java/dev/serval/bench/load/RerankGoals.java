package dev.serval.bench.load;

import java.util.List;

/**
 * Issue 40's rerank goal, evaluated on one run's figures: Serval's pairs/s (documents scored per second) at
 * saturation &ge; {@value #MIN_RATIO} &times; the raw loop's ({@link RerankRawLoop}) over the same pairs. In each round
 * Serval's figure is its best closed loop of the round and the limit is the better of the raw loop's measurements
 * just before and just after Serval's runs (each the raw loop's best batch size); the verdict is on the median of the
 * rounds' ratios, so that one round disturbed by the shared machine neither passes nor fails the run alone. Pure
 * functions over numbers. Stateless.
 */
final class RerankGoals {

    static final double MIN_RATIO = 0.9;

    private RerankGoals() {
    }

    /**
     * One round's figures.
     *
     * @param servalPairsPerSecond Serval's best closed loop of the round, pairs/s
     * @param connections          the connections of that loop
     * @param rawBefore            the raw loop's pairs/s just before Serval's runs of the round (NaN: not measured)
     * @param rawAfter             the same just after them
     * @param servalCpu            Serval's server process CPU per pair in that loop, µs (NaN: not measured)
     * @param rawCpu               the raw loop's process CPU per pair in the measurement that is the limit, µs
     */
    record Round(int round, double servalPairsPerSecond, int connections, double rawBefore, double rawAfter,
            double servalCpu, double rawCpu) {

        /** A round without CPU figures. */
        Round(int round, double servalPairsPerSecond, int connections, double rawBefore, double rawAfter) {
            this(round, servalPairsPerSecond, connections, rawBefore, rawAfter, Double.NaN, Double.NaN);
        }

        /** The better of the two raw measurements around the round; NaN when neither was measured. */
        double limit() {
            if (Double.isNaN(rawBefore)) {
                return rawAfter;
            }
            return Double.isNaN(rawAfter) ? rawBefore : Math.max(rawBefore, rawAfter);
        }

        /** Serval over the limit; NaN when a figure is missing or the limit is not positive. */
        double ratio() {
            double limit = limit();
            return Double.isNaN(limit) || limit <= 0 || Double.isNaN(servalPairsPerSecond) ? Double.NaN
                    : servalPairsPerSecond / limit;
        }

        /**
         * Serval's CPU per pair over the raw loop's (1 is as efficient as the raw loop; NaN when a figure is
         * missing). Reported without a goal: on a machine shared with other work a process's pairs/s follows the CPU
         * share it gets, its CPU per pair much less.
         */
        double cpuRatio() {
            return Double.isNaN(servalCpu) || Double.isNaN(rawCpu) || rawCpu <= 0 ? Double.NaN : servalCpu / rawCpu;
        }
    }

    /**
     * The run's verdict.
     *
     * @param medianRatio the median of the rounds' ratios (the mean of the middle two for an even count); NaN when a
     *                    round has no ratio
     * @param met         whether the median is at least {@link #MIN_RATIO}; false when it is NaN
     */
    record Verdict(List<Round> rounds, double medianRatio, boolean met) {

        Verdict {
            rounds = List.copyOf(rounds);
        }
    }

    static Verdict evaluate(List<Round> rounds) {
        if (rounds.isEmpty()) {
            throw new IllegalArgumentException("no round to evaluate");
        }
        double[] ratios = rounds.stream().mapToDouble(Round::ratio).sorted().toArray();
        int n = ratios.length;
        boolean missing = rounds.stream().anyMatch(r -> Double.isNaN(r.ratio()));
        double median = missing ? Double.NaN : n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
        return new Verdict(rounds, median, !Double.isNaN(median) && median >= MIN_RATIO);
    }
}
