package dev.serval.api.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class HistogramReadingTest {

    private static final double[] BOUNDS = {1, 2, 4, 8};

    private static HistogramReading reading(double total, double... cumulative) {
        return new HistogramReading(cumulative[cumulative.length - 1], total, BOUNDS, cumulative);
    }

    @Test
    void quantilesInterpolateInsideTheirBucketAsHistogramQuantileDoes() {
        // 10 values: 4 in (0,1], 4 in (1,2], 2 in (2,4].
        HistogramReading recorded = reading(15, 4, 8, 10, 10);
        assertEquals(0.5, recorded.quantile(0.2), 1e-9); // rank 2 of 4 in the first bucket: half of 1
        assertEquals(1.25, recorded.quantile(0.5), 1e-9); // rank 5: one of 4 into (1,2]
        assertEquals(3.9, recorded.quantile(0.99), 1e-9); // rank 9.9: 1.9 of 2 into (2,4]
        assertEquals(1.5, recorded.mean(), 1e-9);
    }

    @Test
    void valuesThatAllFitTheFirstBucketAreSpreadOverTwiceTheirMean() {
        HistogramReading zeros = reading(0, 10, 10, 10, 10); // a queue that never waited
        assertEquals(0, zeros.quantile(0.5), 1e-9);
        assertEquals(0, zeros.quantile(0.99), 1e-9);
        HistogramReading small = reading(1, 10, 10, 10, 10); // ten values of 0.1 on average
        assertEquals(0.1, small.quantile(0.5), 1e-9);
        assertEquals(0.198, small.quantile(0.99), 1e-9);
        HistogramReading large = reading(9, 10, 10, 10, 10); // mean 0.9: twice that is past the bucket's bound
        assertEquals(0.5, large.quantile(0.5), 1e-9);
    }

    @Test
    void aRankAboveEveryBucketIsTheHighestBound() {
        // 10 values, 2 of them above the highest bound (counted in count only, as +Inf is).
        HistogramReading recorded = new HistogramReading(10, 100, BOUNDS, new double[] {2, 4, 6, 8});
        assertEquals(8, recorded.quantile(0.99), 1e-9);
    }

    @Test
    void nothingRecordedHasNoQuantileAndNoMean() {
        assertTrue(Double.isNaN(HistogramReading.NONE.quantile(0.5)));
        assertTrue(Double.isNaN(HistogramReading.NONE.mean()));
        HistogramReading same = reading(15, 4, 8, 10, 10);
        HistogramReading nothing = same.since(same);
        assertEquals(0, nothing.count());
        assertTrue(Double.isNaN(nothing.quantile(0.99)));
    }

    @Test
    void aDifferenceIsWhatWasRecordedInBetween() {
        HistogramReading before = reading(15, 4, 8, 10, 10);
        HistogramReading after = reading(15 + 6 * 7, 4, 8, 10, 16); // six values in (4,8], 7 each
        HistogramReading between = after.since(before);
        assertEquals(6, between.count());
        assertEquals(7, between.mean(), 1e-9);
        assertEquals(6, between.quantile(0.5), 1e-9); // rank 3 of 6 in (4,8]
    }

    @Test
    void aHistogramThatAppearedInBetweenCountsFromZero() {
        HistogramReading first = reading(3, 1, 2, 2, 2);
        assertEquals(2, first.since(HistogramReading.NONE).count());
        assertEquals(first, HistogramReading.NONE.plus(first));
    }

    @Test
    void aCountThatWentDownCountsAsNothing() {
        HistogramReading later = reading(3, 1, 2, 2, 2);
        HistogramReading replaced = later.since(reading(100, 10, 20, 30, 40));
        assertEquals(0, replaced.count());
        assertTrue(Double.isNaN(replaced.quantile(0.5)));
    }

    @Test
    void readingsWithTheSameBucketsSum() {
        HistogramReading sum = reading(1, 1, 1, 1, 1).plus(reading(6, 0, 0, 2, 2));
        assertEquals(3, sum.count());
        assertEquals(7, sum.total(), 1e-9);
        assertEquals(List.of(1.0, 1.0, 3.0, 3.0), java.util.Arrays.stream(sum.cumulative()).boxed().toList());
        HistogramReading other = new HistogramReading(1, 1, new double[] {1}, new double[] {1});
        assertThrows(IllegalArgumentException.class, () -> sum.plus(other));
    }

    /** The registry Serval exports with keeps cumulative buckets: differences of two snapshots are the interval's. */
    @Test
    void prometheusTimersGiveCumulativeBucketsInMilliseconds() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        Timer timer = Timer.builder("t").publishPercentileHistogram().register(registry);
        for (int i = 0; i < 100; i++) {
            timer.record(Duration.ofMillis(3));
        }
        HistogramReading before = HistogramReading.ofTimer(timer);
        assertEquals(100, before.count());
        assertEquals(300, before.total(), 1e-6);
        for (int i = 0; i < 100; i++) {
            timer.record(Duration.ofMillis(200));
        }
        HistogramReading between = HistogramReading.ofTimers(List.of(timer)).since(before);
        assertEquals(100, between.count());
        assertEquals(200, between.mean(), 1e-6);
        double p50 = between.quantile(0.5);
        assertTrue(p50 > 150 && p50 <= 250, "p50 of 100 x 200 ms from the buckets: " + p50);
    }
}
