package dev.serval.api.dashboard;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a histogram (or several with the same buckets, summed) had recorded by one moment: its count, its total and
 * its cumulative count at each bucket bound, as Prometheus scrapes them. Two readings give what was recorded between
 * them, as {@code rate(..._bucket)} does, and {@link #quantile} estimates a quantile of that the way
 * {@code histogram_quantile} does, linearly inside the bucket that holds the rank: the dashboard shows the numbers a
 * Grafana over the same meters would.
 */
record HistogramReading(double count, double total, double[] bounds, double[] cumulative) {

    static final HistogramReading NONE = new HistogramReading(0, 0, new double[0], new double[0]);

    /** The sum of {@code timers}' readings, in milliseconds. */
    static HistogramReading ofTimers(List<Timer> timers) {
        HistogramReading sum = NONE;
        for (Timer timer : timers) {
            sum = sum.plus(of(timer.takeSnapshot(), TimeUnit.MILLISECONDS));
        }
        return sum;
    }

    static HistogramReading ofTimer(Timer timer) {
        return of(timer.takeSnapshot(), TimeUnit.MILLISECONDS);
    }

    static HistogramReading ofSummary(DistributionSummary summary) {
        return of(summary.takeSnapshot(), null);
    }

    /** {@code unit}: the unit of a timer's bounds and total; null for a distribution summary's own unit. */
    private static HistogramReading of(HistogramSnapshot snapshot, TimeUnit unit) {
        CountAtBucket[] buckets = snapshot.histogramCounts();
        double[] bounds = new double[buckets.length];
        double[] cumulative = new double[buckets.length];
        for (int i = 0; i < buckets.length; i++) {
            bounds[i] = unit == null ? buckets[i].bucket() : buckets[i].bucket(unit);
            cumulative[i] = buckets[i].count();
        }
        double total = unit == null ? snapshot.total() : snapshot.total(unit);
        return new HistogramReading(snapshot.count(), total, bounds, cumulative);
    }

    /** This reading and {@code other} summed; both must have the same bounds unless one is {@link #NONE}. */
    HistogramReading plus(HistogramReading other) {
        if (other.bounds.length == 0 && other.count == 0) {
            return this;
        }
        if (bounds.length == 0 && count == 0) {
            return other;
        }
        if (bounds.length != other.bounds.length) {
            throw new IllegalArgumentException("histograms with different buckets cannot be summed");
        }
        double[] summed = new double[cumulative.length];
        for (int i = 0; i < summed.length; i++) {
            summed[i] = cumulative[i] + other.cumulative[i];
        }
        return new HistogramReading(count + other.count, total + other.total, bounds, summed);
    }

    /**
     * What was recorded after {@code earlier} up to this reading. A histogram that first appeared in between (its
     * earlier reading {@link #NONE}) counts from zero; a count that went down (a meter replaced) counts as nothing.
     */
    HistogramReading since(HistogramReading earlier) {
        boolean comparable = earlier.bounds.length == bounds.length;
        double[] delta = new double[cumulative.length];
        for (int i = 0; i < delta.length; i++) {
            delta[i] = Math.max(0, cumulative[i] - (comparable ? earlier.cumulative[i] : 0));
        }
        double recorded = count - (comparable ? earlier.count : 0);
        if (recorded <= 0) {
            return new HistogramReading(0, 0, bounds, new double[cumulative.length]);
        }
        return new HistogramReading(recorded, total - (comparable ? earlier.total : 0), bounds, delta);
    }

    /** The mean of what was recorded, or NaN when nothing was. */
    double mean() {
        return count > 0 ? total / count : Double.NaN;
    }

    /**
     * The {@code q} quantile of what was recorded (0 &lt; q &lt; 1), interpolated inside its bucket from the bucket
     * below's bound (0 for the first); the highest bound when the rank lies above every bucket; NaN when nothing
     * was recorded. One refinement over {@code histogram_quantile}: when everything fits the first bucket (under a
     * millisecond for timers), the values are known to average {@link #mean()}, so they are spread over twice the
     * mean rather than the whole bucket: a queue that never waited shows 0, not half a millisecond.
     */
    double quantile(double q) {
        if (count <= 0) {
            return Double.NaN;
        }
        double rank = q * count;
        double lowerBound = 0;
        double below = 0;
        for (int i = 0; i < bounds.length; i++) {
            if (cumulative[i] >= rank) {
                double upperBound = i == 0 && cumulative[0] >= count ? Math.min(bounds[0], 2 * mean()) : bounds[i];
                double inBucket = cumulative[i] - below;
                double fraction = inBucket > 0 ? (rank - below) / inBucket : 1;
                return lowerBound + (upperBound - lowerBound) * fraction;
            }
            lowerBound = bounds[i];
            below = cumulative[i];
        }
        return bounds.length > 0 ? bounds[bounds.length - 1] : Double.NaN;
    }
}
