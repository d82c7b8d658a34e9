package dev.serval.bench.load;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The autoscaling ramp's time series and what it shows, computed from the samples alone (pure functions, so that
 * {@code RampTimelineTest} checks them on synthetic series): the step response (from the step up until the second
 * replica runs), the time from idle until zero replicas, and the checks the summary reports.
 */
final class RampTimeline {

    private RampTimeline() {
    }

    /**
     * One phase of offered load.
     *
     * @param name     what the summary calls it
     * @param multiple the offered rate as a multiple of one replica's measured capacity; 0: no load at all
     * @param duration how long it lasts
     */
    record Phase(String name, double multiple, Duration duration) {

        Phase {
            if (multiple < 0 || duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException("a phase needs a rate >= 0 and a positive duration: " + name);
            }
        }
    }

    /**
     * One sample, at {@code seconds} since the first phase began: what completed in the interval before it
     * (latencies in ms from the intended send time, NaN without successes) and the deployment as
     * {@code GET /api/deployments/<name>} showed it just after.
     */
    record Row(double seconds, String phase, double offered, double served, Map<String, Long> errors, double p50,
            double p99, int desired, int running, int starting, String state, double ongoing) {

        long errorCount() {
            return errors.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** When each phase begins, in seconds since the first began. */
    static double start(List<Phase> phases, String name) {
        double at = 0;
        for (Phase phase : phases) {
            if (phase.name().equals(name)) {
                return at;
            }
            at += phase.duration().toMillis() / 1000.0;
        }
        throw new IllegalArgumentException("no phase " + name);
    }

    /**
     * Seconds from {@code from} until the first sample of phase {@code phase} (or later) with at least
     * {@code replicas} RUNNING, or NaN if none had.
     */
    static double untilRunning(List<Row> rows, double from, int replicas) {
        for (Row row : rows) {
            if (row.seconds() >= from && row.running() >= replicas) {
                return row.seconds() - from;
            }
        }
        return Double.NaN;
    }

    /** Seconds from {@code from} until the first sample with no replica desired or running, or NaN if none. */
    static double untilZero(List<Row> rows, double from) {
        for (Row row : rows) {
            if (row.seconds() >= from && row.desired() == 0 && row.running() == 0) {
                return row.seconds() - from;
            }
        }
        return Double.NaN;
    }

    /** The most replicas RUNNING in any sample of phase {@code phase}. */
    static int maxRunning(List<Row> rows, String phase) {
        return rows.stream().filter(r -> r.phase().equals(phase)).mapToInt(Row::running).max().orElse(0);
    }

    /**
     * Errors in the samples of every phase but {@code except}, by kind: the ramp expects none but the bounded
     * refusals of a cold start.
     */
    static long errorsOutside(List<Row> rows, String except) {
        return rows.stream().filter(r -> !r.phase().equals(except)).mapToLong(Row::errorCount).sum();
    }
}
