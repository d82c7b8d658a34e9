package dev.serval.bench.load;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A long open-loop run's figures interval by interval, read while the run goes on (the soak): the load generator's
 * event loop records every answer as it completes ({@link #success}, {@link #failure}); another thread calls
 * {@link #take} every interval and gets what completed since its previous call. Successful latencies are from the
 * intended start, as in {@link LatencyRecorder}; an interval holds the requests that <em>completed</em> in it (the
 * usual rule for a time series: a request delayed across a boundary is charged to the interval it ends in).
 *
 * <p>Threading: {@link #success} and {@link #failure} may be called from any one thread (HdrHistogram's
 * {@link Recorder} is wait-free for its writer, and errors are {@link LongAdder}s); {@link #take} from one other
 * thread, which owns {@link #lastErrors}.
 */
public final class IntervalLog {

    /** An hour, in nanoseconds, as in {@link LatencyRecorder}. */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final Recorder latency = new Recorder(1_000, MAX_NANOS, 3);
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    /** Taker only: the error totals at the previous {@link #take}. */
    private final Map<String, Long> lastErrors = new TreeMap<>();
    /** Taker only: recycled by the recorder. */
    private Histogram recycled;

    /** A request answered 200 after {@code latencyNanos} from its intended start. */
    void success(long latencyNanos) {
        latency.recordValue(Math.min(Math.max(latencyNanos, 1_000), MAX_NANOS));
    }

    /** A request failed: {@code kind} is {@code "HTTP <status>"} or an exception's class. */
    void failure(String kind) {
        errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    /** What completed since the previous call (or since the log was made). */
    public Interval take() {
        recycled = latency.getIntervalHistogram(recycled);
        Map<String, Long> interval = new TreeMap<>();
        errors.forEach((kind, total) -> {
            long now = total.sum();
            long delta = now - lastErrors.getOrDefault(kind, 0L);
            lastErrors.put(kind, now);
            if (delta > 0) {
                interval.put(kind, delta);
            }
        });
        Histogram copy = recycled.copy();
        return new Interval(copy.getTotalCount(), Map.copyOf(interval), millis(copy, 50), millis(copy, 99),
                millis(copy, 100));
    }

    private static double millis(Histogram histogram, double percentile) {
        return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getValueAtPercentile(percentile) / 1e6;
    }

    /**
     * One interval's answers: successes, failures by kind, and successful latencies (ms from the intended start; NaN
     * when none succeeded).
     */
    public record Interval(long successes, Map<String, Long> errors, double p50, double p99, double max) {

        public long errorCount() {
            return errors.values().stream().mapToLong(Long::longValue).sum();
        }
    }
}
