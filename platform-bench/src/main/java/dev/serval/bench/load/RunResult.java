package dev.serval.bench.load;

import java.util.Map;

/**
 * The figures of one run: one target (Serval or the bare server), one workload, one load shape. Latencies are in
 * milliseconds from the intended start (see {@link LatencyRecorder}); NaN when no request succeeded. Written to the
 * JSON report as it is.
 *
 * @param target        {@code serval} or {@code bare-vertx}
 * @param workload      the workload's name
 * @param mode          {@code closed} (a fixed number of connections, each sending its next request when the
 *                      previous one ends) or {@code open} (a fixed arrival rate)
 * @param connections   closed loop: the connections; open loop: the most the client may open
 * @param offeredRate   open loop: requests per second sent; closed loop: NaN
 * @param throughput    successful requests per second inside the measurement window
 * @param successes     successful requests inside the window
 * @param errors        failed requests inside the window, by kind ({@code HTTP 503}, an exception's class,
 *                      {@code unfinished} for open-loop requests sent and still unanswered when the run stopped
 *                      waiting, {@code unsent} for those still waiting in the client for a connection then)
 * @param sendLagP50    open loop: how late the generator sent the median request, in ms (its own jitter, part of
 *                      every latency); closed loop: NaN
 * @param sendLagP99    the same at the 99th percentile
 * @param cpu           shares of all cores over the window: the generator's JVM, the server's process, the rest
 * @param loadAverage   /proc/loadavg's 1/5/15-minute averages when the run started
 * @param serverMetrics Serval's own meters over the run ({@link ServalMetrics#between}), empty when not scraped
 * @param refusals      the answers other than 200 inside the window: how many, how fast, whether proper
 * @param client        what the client's connection pool did during the run
 */
public record RunResult(String target, String workload, String mode, int connections, double offeredRate,
        double throughput, long successes, Map<String, Long> errors, double p50, double p90, double p99, double p999,
        double max, double mean, double sendLagP50, double sendLagP99, MachineUsage.Shares cpu, String loadAverage,
        Map<String, Double> serverMetrics, Refusals refusals, ClientConnections client) {

    public RunResult {
        errors = Map.copyOf(errors);
        serverMetrics = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(serverMetrics));
    }

    /**
     * The HTTP answers other than 200 (latency from the intended start, ms; NaN when there were none).
     *
     * @param count             every non-200 answer
     * @param improper          those that were not 429 or 503 with a usable {@code Retry-After} header
     * @param p50               latency of the median non-200 answer
     * @param p99               the same at the 99th percentile
     * @param max               the slowest
     * @param retryAfterP50Millis the median Retry-After of the proper ones, in ms ({@code retry-after-ms} when
     *                          present, else {@code Retry-After} seconds x 1000)
     * @param withRetryAfterMs  proper refusals that carried {@code retry-after-ms}
     */
    public record Refusals(long count, long improper, double p50, double p99, double max, double retryAfterP50Millis,
            long withRetryAfterMs) {

        /** No non-200 answer. */
        public static final Refusals NONE = new Refusals(0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0);
    }

    /**
     * The client's connections over the whole run (warm-up and drain included).
     *
     * @param opened     connections opened (one per connection set up; the pool reuses them while they stay open)
     * @param peak       the most open at once
     * @param waitP50    how long the median request waited for a connection of the pool, from its intended start
     *                   (ms; inside the window; in a closed loop, where each client has its connection, only the
     *                   first request of each waits, for the connection to open)
     * @param waitP99    the same at the 99th percentile: near the send lag, the pool was not a limit; far above it,
     *                   every connection was busy and requests queued in the client
     */
    public record ClientConnections(long opened, int peak, double waitP50, double waitP99) {
    }

    /** This result with Serval's meters over the run. */
    public RunResult withServerMetrics(Map<String, Double> metrics) {
        return new RunResult(target, workload, mode, connections, offeredRate, throughput, successes, errors, p50, p90,
                p99, p999, max, mean, sendLagP50, sendLagP99, cpu, loadAverage, metrics, refusals, client);
    }

    /**
     * Failed requests that got no HTTP answer: connection errors and timeouts (by exception class) and the open
     * loop's {@code unfinished} and {@code unsent}.
     */
    public long unanswered() {
        return errors.entrySet().stream().filter(e -> !e.getKey().startsWith("HTTP "))
                .mapToLong(Map.Entry::getValue).sum();
    }

    /** All failed requests inside the window. */
    public long errorCount() {
        return errors.values().stream().mapToLong(Long::longValue).sum();
    }

    /** A short human label: "closed 64" or "open 1500/s". */
    public String shape() {
        return mode.equals("closed") ? "closed " + connections : String.format("open %.0f/s", offeredRate);
    }
}
