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
     */
    record Round(int round, double servalPairsPerSecond, int connections, double rawBefore, double rawAfter) {

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
