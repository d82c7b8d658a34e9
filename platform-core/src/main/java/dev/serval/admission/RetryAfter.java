package dev.serval.admission;

import java.time.Duration;

/**
 * When a refused caller may retry: the time for the work ahead of it, and its own, to drain at the pace observed so
 * far, from 1 ms to 60 s. Every {@link dev.serval.error.Overloaded} the engine throws carries one of these estimates;
 * the HTTP edge turns it into {@code Retry-After} (whole seconds) and {@code retry-after-ms}.
 *
 * <p>The pace is the time one unit of work takes to leave, smoothed as an exponentially weighted moving average. It
 * is fed in one of two ways, chosen by the factory: {@link #completionPaced} observes the interval between
 * completions ({@link #completedAt}: the deployment's queue, drained by every replica at once), and
 * {@link #servicePaced} observes the service time of one unit on one of {@code lanes} servers working in parallel
 * ({@link #served}, {@link #reset}: a replica's predictors).
 *
 * <p>Threads: any thread feeds and reads it. {@link #nanosPerUnit} and {@link #lastCompletionNanos} are volatile and
 * updated without coordination: best-effort by design, a lost update only ages the estimate. Feeding allocates
 * nothing; an estimate allocates its {@link Duration}, only when a request is refused.
 */
public final class RetryAfter {

    /** The shortest hint given. */
    public static final Duration MIN = Duration.ofMillis(1);
    /** The longest hint given: an estimate beyond a minute is noise. */
    public static final Duration MAX = Duration.ofSeconds(60);
    /** The pace assumed before anything was observed. */
    static final long INITIAL_NANOS_PER_UNIT = 10_000_000L;

    private final int smoothingShift;
    private final int lanes;
    private volatile long nanosPerUnit = INITIAL_NANOS_PER_UNIT;
    private volatile long lastCompletionNanos;

    private RetryAfter(int smoothingShift, int lanes, long nowNanos) {
        if (lanes < 1) {
            throw new IllegalArgumentException("lanes must be >= 1, was " + lanes);
        }
        this.smoothingShift = smoothingShift;
        this.lanes = lanes;
        this.lastCompletionNanos = nowNanos;
    }

    /**
     * Paced by the interval between completions, each new interval weighing 1/16: for a queue that any of several
     * servers drains, whose overall completion rate is what a caller waits on.
     *
     * @param nowNanos the time the count of intervals starts from
     */
    public static RetryAfter completionPaced(long nowNanos) {
        return new RetryAfter(4, 1, nowNanos);
    }

    /**
     * Paced by the service time of one unit on one of {@code lanes} parallel servers, each new time weighing 1/8:
     * the queue drains {@code lanes} units per service time.
     */
    public static RetryAfter servicePaced(int lanes) {
        return new RetryAfter(3, lanes, 0);
    }

    /** One unit completed at {@code nowNanos}: the interval since the previous completion feeds the pace. */
    public void completedAt(long nowNanos) {
        long interval = nowNanos - lastCompletionNanos;
        lastCompletionNanos = nowNanos;
        served(interval);
    }

    /** One unit took {@code nanos} to serve: it feeds the pace. */
    public void served(long nanos) {
        nanosPerUnit += (nanos - nanosPerUnit) >> smoothingShift;
    }

    /** Replaces the pace with one measured outright (a warm-up inference), forgetting what was observed before. */
    public void reset(long nanosPerUnit) {
        this.nanosPerUnit = nanosPerUnit;
    }

    /** The time for {@code ahead} units and the caller's own to drain: {@link #MIN} to {@link #MAX}, in whole ms. */
    public Duration estimate(int ahead) {
        double nanos = (ahead + 1.0) * Math.max(nanosPerUnit, 0) / lanes; // double: no overflow
        return Duration.ofMillis((long) Math.max(MIN.toMillis(), Math.min(MAX.toMillis(), Math.ceil(nanos / 1e6))));
    }
}
