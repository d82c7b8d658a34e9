package dev.serval.bench.load;

/**
 * When each request of an open-loop run is meant to be sent: request {@code i} at {@code start + i / rate},
 * computed from {@code i} rather than by adding a period to the previous time, so that rounding never accumulates
 * (at 3,000 req/s the period, 333,333.3 ns, is not a whole number of nanoseconds). Latency is measured from these
 * intended times, not from when the request actually left: a server (or a generator) that falls behind is charged
 * for the whole delay, which is what avoids coordinated omission. An immutable value.
 *
 * @param startNanos   {@link System#nanoTime()} of request 0
 * @param ratePerSecond requests per second, positive
 */
public record OpenLoopSchedule(long startNanos, double ratePerSecond) {

    public OpenLoopSchedule {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be positive and finite, was " + ratePerSecond);
        }
    }

    /** The intended send time of request {@code index} (0-based), in {@link System#nanoTime()} units. */
    public long intendedNanos(long index) {
        return startNanos + Math.round(index * 1e9 / ratePerSecond);
    }

    /**
     * The first index whose intended time is after {@code nanos}: every request before it is due at
     * {@code nanos}. Requests from {@code next} up to this index are the ones to send now.
     */
    public long firstNotDue(long next, long nanos) {
        long index = next;
        while (intendedNanos(index) <= nanos) {
            index++;
        }
        return index;
    }

}
