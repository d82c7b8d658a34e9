package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The soak's goals (issue 14), evaluated on its samples: pure functions over numbers, tested without a server.
 * Stateless.
 *
 * <ul>
 *   <li>no failed request in the whole run: every request intended during it answered 200, those still in flight at
 *       its end included (the run's own count, which the samples' per-interval errors only break down);</li>
 *   <li>heap after a full GC is flat: the slope of the least-squares line through the samples of the second half of
 *       the run is at most {@value #MAX_HEAP_SLOPE_MB_PER_MINUTE} MB/min;</li>
 *   <li>Serval's resident memory is flat the same way, at most {@value #MAX_RSS_SLOPE_MB_PER_MINUTE} MB/min.</li>
 * </ul>
 * Only the second half counts: the first holds the JIT's code cache filling, the heap settling after warm-up and
 * native allocators growing their arenas, which level off; a leak does not. The thresholds are what a 5-minute
 * window can tell apart from the noise of these readings on a 2-core machine (a full GC's heap moves by a few
 * hundred KB from one sample to the next; RSS by tens of MB, as G1 gives back heap after each forced GC and takes it
 * again), and each is small next to a leak that matters: 0.5 MB/min is 720 MB a day. Every slope comes with its
 * standard error, so that a reader can tell a slope from noise. Reported without a goal: the slope of RSS minus heap
 * committed (native memory, metaspace, code, stacks: where a leak in ONNX Runtime would show, without the heap's
 * commit and uncommit), of p99 per interval and of the thread count.
 */
final class SoakGoals {

    static final double MAX_HEAP_SLOPE_MB_PER_MINUTE = 0.5;
    static final double MAX_RSS_SLOPE_MB_PER_MINUTE = 2.0;

    private SoakGoals() {
    }

    /**
     * One sample.
     *
     * @param minutes     since the soak's load started
     * @param errors      failed requests that completed in the interval ending here
     * @param p99Millis   the interval's p99 (successful requests; NaN when none)
     * @param heapMb      Serval's heap used just after a full GC, MB
     * @param rssMb       Serval's resident memory, MB
     * @param nativeMb    RSS minus heap committed, MB
     * @param threads     Serval's threads
     */
    record Sample(double minutes, long errors, double p99Millis, double heapMb, double rssMb, double nativeMb,
            long threads) {
    }

    /**
     * A least-squares line's slope per minute and the slope's standard error (both NaN with fewer than 3 usable
     * points).
     */
    record Fit(double slope, double standardError) {
    }

    /**
     * One goal or reported figure.
     *
     * @param value         the figure (a count, or a slope per minute)
     * @param standardError a slope's standard error; NaN for a count
     * @param goal          the goal as text, or "" when only reported
     * @param met           whether the goal holds; null when only reported or when there are too few samples
     */
    record Verdict(String figure, double value, double standardError, String unit, String goal, Boolean met) {
    }

    /** The goals on {@code samples}, with {@code failedRequests} in the whole run. */
    static List<Verdict> evaluate(List<Sample> samples, long failedRequests) {
        List<Verdict> verdicts = new ArrayList<>();
        verdicts.add(new Verdict("failed requests", failedRequests, Double.NaN, "", "= 0", failedRequests == 0));
        List<Sample> half = secondHalf(samples);
        verdicts.add(slope(half, "heap after full GC, second half", Sample::heapMb, MAX_HEAP_SLOPE_MB_PER_MINUTE));
        verdicts.add(slope(half, "RSS, second half", Sample::rssMb, MAX_RSS_SLOPE_MB_PER_MINUTE));
        verdicts.add(reported(half, "RSS minus heap committed, second half", Sample::nativeMb, "MB/min"));
        verdicts.add(reported(half, "p99 per interval, second half", Sample::p99Millis, "ms/min"));
        verdicts.add(reported(half, "threads, second half", s -> s.threads(), "per min"));
        return verdicts;
    }

    static Verdict slope(List<Sample> half, String figure, ToDoubleFunction<Sample> value, double atMost) {
        Fit fit = fit(half, value);
        return new Verdict(figure, fit.slope(), fit.standardError(), "MB/min", String.format("≤ %.1f MB/min", atMost),
                Double.isNaN(fit.slope()) ? null : fit.slope() <= atMost);
    }

    static Verdict reported(List<Sample> half, String figure, ToDoubleFunction<Sample> value, String unit) {
        Fit fit = fit(half, value);
        return new Verdict(figure, fit.slope(), fit.standardError(), unit, "", null);
    }

    /** The samples taken at or after the middle of the run (by time, not by count). */
    static List<Sample> secondHalf(List<Sample> samples) {
        if (samples.isEmpty()) {
            return List.of();
        }
        double middle = samples.getLast().minutes() / 2;
        return samples.stream().filter(s -> s.minutes() >= middle).toList();
    }

    /**
     * The slope of the least-squares line through ({@code minutes}, {@code value}) of {@code samples}, per minute,
     * skipping NaN values; NaN with fewer than 3 usable samples (two points always make a line).
     */
    static double slopePerMinute(List<Sample> samples, ToDoubleFunction<Sample> value) {
        return fit(samples, value).slope();
    }

    /** {@link #slopePerMinute}, with the slope's standard error. */
    static Fit fit(List<Sample> samples, ToDoubleFunction<Sample> value) {
        List<double[]> points = new ArrayList<>();
        for (Sample sample : samples) {
            double y = value.applyAsDouble(sample);
            if (!Double.isNaN(y)) {
                points.add(new double[] {sample.minutes(), y});
            }
        }
        if (points.size() < 3) {
            return new Fit(Double.NaN, Double.NaN);
        }
        double meanX = points.stream().mapToDouble(p -> p[0]).average().orElseThrow();
        double meanY = points.stream().mapToDouble(p -> p[1]).average().orElseThrow();
        double covariance = 0;
        double variance = 0;
        for (double[] p : points) {
            covariance += (p[0] - meanX) * (p[1] - meanY);
            variance += (p[0] - meanX) * (p[0] - meanX);
        }
        if (variance == 0) {
            return new Fit(Double.NaN, Double.NaN);
        }
        double slope = covariance / variance;
        double residuals = 0;
        for (double[] p : points) {
            double residual = p[1] - (meanY + slope * (p[0] - meanX));
            residuals += residual * residual;
        }
        return new Fit(slope, Math.sqrt(residuals / (points.size() - 2) / variance));
    }
}
