package dev.serval.api.dashboard;

import dev.serval.api.serving.Outcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The last {@code capacity} samples of one deployment's traffic, oldest first: requests per second by outcome,
 * p50/p99 per phase, batch sizes and inputs per request. A ring of primitive columns, so keeping five minutes of
 * history allocates nothing per sample.
 *
 * <p>One writer (the sampler's thread, once per sample) and readers on the event loops (a dashboard's poll, every
 * second or two); both hold the monitor, for microseconds. {@link #id} tells a reader that a deployment of the same
 * name was recreated, so the history it kept belongs to another one.
 */
final class DeploymentHistory {

    /** The phases of a request (docs/metrics.md, "The phases of a request"), as the JSON names them. */
    static final List<String> PHASES = List.of("total", "queue", "predictor", "batch", "inference");

    static final int OUTCOMES = Outcome.values().length;
    /** Column of phase {@code p}'s p50; its p99 is the next one. */
    static final int LATENCY = OUTCOMES;
    static final int BATCH_MEAN = LATENCY + 2 * PHASES.size();
    static final int BATCH_P99 = BATCH_MEAN + 1;
    static final int INPUTS_MEAN = BATCH_P99 + 1;
    /** The share of the inputs looked up in the result cache that were found there. */
    static final int CACHE_HIT_RATE = INPUTS_MEAN + 1;
    static final int COLUMNS = CACHE_HIT_RATE + 1;

    private final long id;
    private final long[] times;
    private final double[][] columns;
    /** Where the next sample goes, and how many samples are kept (at most the capacity). */
    private int next;
    private int size;

    DeploymentHistory(long id, int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a history keeps at least one sample, not " + capacity);
        }
        this.id = id;
        this.times = new long[capacity];
        this.columns = new double[COLUMNS][capacity];
    }

    long id() {
        return id;
    }

    /** Adds the sample ending at {@code epochMillis}: {@code point[column]}, NaN where nothing was observed. */
    synchronized void add(long epochMillis, double[] point) {
        if (point.length != COLUMNS) {
            throw new IllegalArgumentException("a sample has " + COLUMNS + " columns, not " + point.length);
        }
        times[next] = epochMillis;
        for (int column = 0; column < COLUMNS; column++) {
            columns[column][next] = point[column];
        }
        next = (next + 1) % times.length;
        size = Math.min(size + 1, times.length);
    }

    /**
     * The samples that ended after {@code afterMillis}, as the dashboard's JSON: {@code t}, {@code requestsPerSecond}
     * by outcome, {@code latencyMs} by phase ({@code p50}, {@code p99}), {@code batchSize} ({@code mean}, {@code p99})
     * , {@code inputsPerRequest} ({@code mean}) and {@code cache} ({@code hitRate}: hits over lookups in the result
     * cache); null where nothing was observed.
     */
    synchronized Map<String, Object> since(long afterMillis) {
        int oldest = (next - size + times.length) % times.length;
        int skip = 0;
        while (skip < size && times[(oldest + skip) % times.length] <= afterMillis) {
            skip++;
        }
        int count = size - skip;
        int first = (oldest + skip) % times.length;
        long[] t = new long[count];
        for (int i = 0; i < count; i++) {
            t[i] = times[(first + i) % times.length];
        }
        Map<String, Object> history = new LinkedHashMap<>();
        history.put("id", id);
        history.put("t", t);
        Map<String, Object> rates = new LinkedHashMap<>();
        for (Outcome outcome : Outcome.values()) {
            rates.put(outcome.tag(), column(outcome.ordinal(), first, count));
        }
        history.put("requestsPerSecond", rates);
        Map<String, Object> latency = new LinkedHashMap<>();
        for (int phase = 0; phase < PHASES.size(); phase++) {
            latency.put(PHASES.get(phase), Map.of(
                    "p50", column(LATENCY + 2 * phase, first, count),
                    "p99", column(LATENCY + 2 * phase + 1, first, count)));
        }
        history.put("latencyMs", latency);
        history.put("batchSize", Map.of("mean", column(BATCH_MEAN, first, count),
                "p99", column(BATCH_P99, first, count)));
        history.put("inputsPerRequest", Map.of("mean", column(INPUTS_MEAN, first, count)));
        history.put("cache", Map.of("hitRate", column(CACHE_HIT_RATE, first, count)));
        return history;
    }

    /** One column's values from ring index {@code first}, NaN as null, rounded to what a chart can show. */
    private List<Double> column(int column, int first, int count) {
        List<Double> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            double value = columns[column][(first + i) % times.length];
            values.add(Double.isNaN(value) || Double.isInfinite(value) ? null : Math.round(value * 1000) / 1000.0);
        }
        return values;
    }

    /** A point of NaNs, to fill. */
    static double[] emptyPoint() {
        double[] point = new double[COLUMNS];
        Arrays.fill(point, Double.NaN);
        return point;
    }
}
