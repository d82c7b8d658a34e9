package dev.serval.autoscaling;

import dev.serval.spec.AutoscalingSpec;
import java.util.Locale;

/**
 * One autoscaled deployment's decisions, Ray Serve's rule: the replicas wanted are the ongoing requests (running and
 * queued, averaged over {@code look_back_period}) divided by {@code target_ongoing_requests}, rounded up, moved
 * toward by the up- or downscaling factor and clamped to {@code [min_replicas, max_replicas]}; a change is made only
 * once every decision for {@code upscale_delay} (or {@code downscale_delay}) has called for one in that direction.
 * <b>Autoscaler thread only</b>: it holds the window of samples and when each direction's run of decisions began.
 *
 * <p>Why it cannot flap: a change resets both runs, and a run breaks on the first decision that does not call for
 * its direction, so two changes are always at least a full delay apart, and a load that swings faster than the
 * delays (a square wave shorter than them) never completes a run. Two exceptions, both deliberate: the step from
 * zero is immediate (a request is waiting for the cold start), and the last step, from one replica to none, waits
 * {@code downscale_to_zero_delay} instead of {@code downscale_delay} (a downscale that would go to zero from more
 * than one replica stops at one first).
 */
final class ScalingPolicy {

    private static final long NONE = Long.MIN_VALUE;

    private final LoadWindow window;
    private long upSince = NONE;
    private long downSince = NONE;

    ScalingPolicy(LoadWindow window) {
        this.window = window;
    }

    LoadWindow window() {
        return window;
    }

    /**
     * What one decision at {@code now} (nanoseconds) does to a deployment of {@code current} replicas, given the
     * samples taken so far: {@link Step#next()} equals {@code current} when nothing changes yet.
     */
    Step decide(AutoscalingSpec spec, int current, long now) {
        if (window.isEmpty()) {
            return new Step(Double.NaN, current, current, "no load measured yet");
        }
        double ongoing = window.average(now, spec.lookBackPeriod().toNanos());
        if (current == 0) {
            upSince = NONE;
            downSince = NONE;
            int latest = window.latest();
            if (latest == 0) {
                return new Step(ongoing, 0, 0, "scaled to zero; no request waiting");
            }
            // A cold start: a request waits for it now, so no delay and no smoothing.
            int wanted = spec.clamp(Math.max(1, ceil(latest / spec.targetOngoingRequests())));
            return new Step(ongoing, wanted, wanted, latest + " request(s) arrived while scaled to zero");
        }
        int wanted = wanted(spec, ongoing, current);
        String load = describe(ongoing, spec);
        if (wanted > current) {
            downSince = NONE;
            upSince = upSince == NONE ? now : upSince;
            long waited = now - upSince;
            if (waited >= spec.upscaleDelay().toNanos()) {
                upSince = NONE;
                return new Step(ongoing, wanted, wanted, load + ": up from " + current + " to " + wanted
                        + " replicas after " + seconds(waited) + " of decisions to scale up (upscale_delay "
                        + seconds(spec.upscaleDelay().toNanos()) + ")");
            }
            return new Step(ongoing, wanted, current, load + ": wants " + wanted + " replicas, for "
                    + seconds(waited) + " of upscale_delay " + seconds(spec.upscaleDelay().toNanos()));
        }
        if (wanted < current) {
            upSince = NONE;
            downSince = downSince == NONE ? now : downSince;
            long waited = now - downSince;
            boolean toZero = wanted == 0 && current == 1;
            int next = toZero ? 0 : Math.max(1, wanted);
            long delay = (toZero ? spec.toZeroDelay() : spec.downscaleDelay()).toNanos();
            String delayName = toZero ? "downscale_to_zero_delay" : "downscale_delay";
            if (waited >= delay) {
                downSince = NONE;
                return new Step(ongoing, wanted, next, load + ": down from " + current + " to " + next
                        + " replicas after " + seconds(waited) + " of decisions to scale down (" + delayName + " "
                        + seconds(delay) + ")");
            }
            return new Step(ongoing, wanted, current, load + ": wants " + wanted + " replicas, for " + seconds(waited)
                    + " of " + delayName + " " + seconds(delay));
        }
        upSince = NONE;
        downSince = NONE;
        return new Step(ongoing, wanted, current, load + ": " + current + " replicas fit");
    }

    /**
     * The replicas {@code ongoing} requests call for, from {@code current} (at least 1): the exact ratio
     * {@code ongoing / target}, approached by the upscaling factor when above {@code current} (rounded up) and by
     * the downscaling factor when below it (at least one replica fewer), within {@code [min, max]}.
     */
    static int wanted(AutoscalingSpec spec, double ongoing, int current) {
        double exact = ongoing / spec.targetOngoingRequests();
        int raw = ceil(exact);
        int wanted;
        if (raw > current) {
            wanted = ceil(current + spec.upscalingFactor() * (exact - current));
        } else if (raw < current) {
            wanted = Math.max(raw, Math.min(current - 1, ceil(current - spec.downscalingFactor() * (current - exact))));
        } else {
            wanted = current;
        }
        return spec.clamp(wanted);
    }

    /** Rounds up, forgiving the last bits of a division that should have been whole (4.0000000001 is 4). */
    private static int ceil(double value) {
        return (int) Math.min(Integer.MAX_VALUE, Math.ceil(value - 1e-9));
    }

    private static String describe(double ongoing, AutoscalingSpec spec) {
        return String.format(Locale.ROOT, "%.2f ongoing requests on average over %s, target %s per replica", ongoing,
                seconds(spec.lookBackPeriod().toNanos()), number(spec.targetOngoingRequests()));
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.1fs", nanos / 1e9);
    }

    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    /**
     * One decision.
     *
     * @param ongoing the average ongoing requests it was made on (NaN before the first sample)
     * @param wanted  the replicas the load calls for now, before delays (and before the CPU budget)
     * @param next    the replicas to run from now on: the current count while a delay runs
     * @param reason  why, in words
     */
    record Step(double ongoing, int wanted, int next, String reason) {
    }
}
