package dev.serval.autoscaling;

/**
 * The ongoing requests of one deployment over the recent past: samples taken at a steady period, kept in a ring
 * buffer, averaged over a look-back period. <b>Autoscaler thread only</b>; no locks. The buffer holds
 * {@code capacity} samples: a look-back period longer than {@code capacity} periods averages only the newest
 * {@code capacity} samples (the autoscaler sizes it from the look-back period it is given).
 */
final class LoadWindow {

    private final long[] times;
    private final int[] values;
    private int next;
    private int size;

    LoadWindow(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, was " + capacity);
        }
        times = new long[capacity];
        values = new int[capacity];
    }

    int capacity() {
        return times.length;
    }

    /** Records {@code ongoing} requests at {@code nanos}; samples must come in time order. */
    void add(long nanos, int ongoing) {
        times[next] = nanos;
        values[next] = ongoing;
        next = (next + 1) % times.length;
        size = Math.min(size + 1, times.length);
    }

    /** Whether no sample was taken yet. */
    boolean isEmpty() {
        return size == 0;
    }

    /** The newest sample; 0 while empty. */
    int latest() {
        return size == 0 ? 0 : values[(next - 1 + times.length) % times.length];
    }

    /**
     * The mean of the samples taken in {@code (now - lookBackNanos, now]}, or of the newest one when none is that
     * recent; NaN while empty.
     */
    double average(long now, long lookBackNanos) {
        if (size == 0) {
            return Double.NaN;
        }
        long sum = 0;
        int count = 0;
        for (int i = 1; i <= size; i++) {
            int at = (next - i + times.length) % times.length;
            if (count > 0 && now - times[at] >= lookBackNanos) {
                break;
            }
            sum += values[at];
            count++;
        }
        return (double) sum / count;
    }
}
