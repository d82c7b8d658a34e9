package dev.serval.bench.load;

import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The outcomes of one run's requests: an HdrHistogram of successful latencies, counts of errors by kind, and (open
 * loop) a histogram of how late the generator actually sent each request. Latency is completion time minus the
 * request's <em>intended</em> start: the scheduled send time in an open-loop run (so time spent waiting for a
 * connection, or behind a slow generator, is charged to the request), the send time in a closed loop (where the
 * next request is intended when the previous one ends).
 *
 * <p>Answers other than 200 are counted by status among the errors; besides, their latency goes to a histogram of
 * their own (how fast a server refuses work matters under overload), and each says whether it was a proper refusal:
 * 429 or 503 with a {@code Retry-After} header. How long each request waited for a connection of the client's
 * bounded pool (from its intended start) is recorded too: when it grows, the pool, not the server, held requests back.
 *
 * <p>Only requests inside the measurement window {@code [fromNanos, toNanos)} count, by the {@link Window} rule:
 * an open-loop run counts every request <em>intended</em> inside the window, however late it completes (the run
 * drains before it is read), so that a slow tail cannot escape; a closed-loop run counts requests that
 * <em>complete</em> inside it, which gives its throughput.
 *
 * <p>Threading: confined to one thread (the load generator's event loop) while a run is going on; the
 * {@link #snapshot} is an immutable copy that any thread may read.
 */
final class LatencyRecorder {

    /** Which instant decides whether a request falls inside the measurement window. */
    enum Window {
        INTENDED_START, COMPLETION
    }

    /** An hour, in nanoseconds: the longest latency recorded at full precision (longer ones are clamped). */
    private static final long MAX_NANOS = 3_600_000_000_000L;

    private final long fromNanos;
    private final long toNanos;
    private final Window window;
    private final Histogram latency = new Histogram(1_000, MAX_NANOS, 3);
    private final Histogram sendLag = new Histogram(1_000, MAX_NANOS, 3);
    private final Histogram refusals = new Histogram(1_000, MAX_NANOS, 3);
    private final Histogram connectionWait = new Histogram(1_000, MAX_NANOS, 3);
    /** Retry-After of the proper refusals, in milliseconds (from {@code retry-after-ms} when present). */
    private final Histogram retryAfters = new Histogram(1, MAX_NANOS / 1_000_000, 3);
    private final Map<String, Long> errors = new TreeMap<>();
    /** Non-200 answers that were not 429/503 with a Retry-After header. */
    private long improperRefusals;
    /** Proper refusals that also carried {@code retry-after-ms}. */
    private long withRetryAfterMs;

    LatencyRecorder(long fromNanos, long toNanos, Window window) {
        if (toNanos <= fromNanos) {
            throw new IllegalArgumentException("empty window [" + fromNanos + ", " + toNanos + ")");
        }
        this.fromNanos = fromNanos;
        this.toNanos = toNanos;
        this.window = window;
    }

    /** A request completed successfully at {@code completedNanos}. */
    void success(long intendedNanos, long completedNanos) {
        if (counts(intendedNanos, completedNanos)) {
            latency.recordValue(clamp(Math.max(completedNanos - intendedNanos, 1_000)));
        }
    }

    /** A request failed at {@code completedNanos}; {@code kind} names the failure ("HTTP 503", an exception class). */
    void failure(long intendedNanos, long completedNanos, String kind) {
        if (counts(intendedNanos, completedNanos)) {
            errors.merge(kind, 1L, Long::sum);
        }
    }

    /**
     * The server answered {@code status} (not 200) at {@code completedNanos}, with a {@code Retry-After} of
     * {@code retryAfterMillis} ms (negative: no usable header); {@code millisHeader}: it came from
     * {@code retry-after-ms}. Counted among the errors as {@code "HTTP <status>"}.
     */
    void refused(long intendedNanos, long completedNanos, int status, long retryAfterMillis, boolean millisHeader) {
        if (!counts(intendedNanos, completedNanos)) {
            return;
        }
        errors.merge("HTTP " + status, 1L, Long::sum);
        refusals.recordValue(clamp(Math.max(completedNanos - intendedNanos, 1_000)));
        if (proper(status, retryAfterMillis)) {
            retryAfters.recordValue(Math.min(Math.max(retryAfterMillis, 1), retryAfters.getHighestTrackableValue()));
            if (millisHeader) {
                withRetryAfterMs++;
            }
        } else {
            improperRefusals++;
        }
    }

    /** Whether an answer is a refusal a client can act on: 429 or 503 with a usable {@code Retry-After}. */
    static boolean proper(int status, long retryAfterMillis) {
        return (status == 429 || status == 503) && retryAfterMillis >= 0;
    }

    /** A request intended at {@code intendedNanos} got a connection from the client's pool at {@code nanos}. */
    void connected(long intendedNanos, long nanos) {
        if (intendedNanos >= fromNanos && intendedNanos < toNanos) {
            connectionWait.recordValue(clamp(Math.max(nanos - intendedNanos, 1_000)));
        }
    }

    /** A request intended at {@code intendedNanos} left the generator at {@code sentNanos}. */
    void sent(long intendedNanos, long sentNanos) {
        if (intendedNanos >= fromNanos && intendedNanos < toNanos) {
            sendLag.recordValue(clamp(Math.max(sentNanos - intendedNanos, 1_000)));
        }
    }

    private boolean counts(long intendedNanos, long completedNanos) {
        long instant = window == Window.INTENDED_START ? intendedNanos : completedNanos;
        return instant >= fromNanos && instant < toNanos;
    }

    private static long clamp(long nanos) {
        return Math.min(nanos, MAX_NANOS);
    }

    /** An immutable copy of everything recorded so far. */
    Recorded snapshot() {
        return new Recorded(latency.copy(), sendLag.copy(), Map.copyOf(errors), (toNanos - fromNanos) / 1e9,
                refusals.copy(), connectionWait.copy(), retryAfters.copy(), improperRefusals, withRetryAfterMs);
    }

    /**
     * What a run recorded: successful latencies and send lags (nanoseconds; the histograms are copies, not to be
     * modified), errors by kind, and the measurement window's length; the latencies of non-200 answers, the waits for
     * a connection (nanoseconds), the Retry-After values of proper refusals (ms), the count of improper refusals
     * (non-200 answers other than 429/503 with Retry-After) and of proper ones that carried {@code retry-after-ms}.
     */
    record Recorded(Histogram latency, Histogram sendLag, Map<String, Long> errors, double windowSeconds,
            Histogram refusals, Histogram connectionWait, Histogram retryAfterMillis, long improperRefusals,
            long withRetryAfterMs) {

        long successes() {
            return latency.getTotalCount();
        }

        long errorCount() {
            return errors.values().stream().mapToLong(Long::longValue).sum();
        }

        /** Successful requests per second over the window. */
        double throughput() {
            return successes() / windowSeconds;
        }

        /** The latency at {@code percentile} (0-100), in milliseconds; NaN when nothing succeeded. */
        double latencyMillis(double percentile) {
            return successes() == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1e6;
        }

        /** A nanosecond histogram's value at {@code percentile}, in milliseconds; NaN when it is empty. */
        static double millis(Histogram histogram, double percentile) {
            return histogram.getTotalCount() == 0 ? Double.NaN : histogram.getValueAtPercentile(percentile) / 1e6;
        }

        /** The non-200 answers' figures. */
        RunResult.Refusals refusalFigures() {
            return new RunResult.Refusals(refusals.getTotalCount(), improperRefusals, millis(refusals, 50),
                    millis(refusals, 99), millis(refusals, 100),
                    retryAfterMillis.getTotalCount() == 0 ? Double.NaN : retryAfterMillis.getValueAtPercentile(50),
                    withRetryAfterMs);
        }
    }
}
