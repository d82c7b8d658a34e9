package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a deployment's replica count follows its load, instead of a fixed {@code num_replicas}: the settings of Ray
 * Serve's autoscaling config, with Ray's defaults. The autoscaler ({@code dev.serval.autoscaling}) keeps
 * {@code ceil(ongoing / target_ongoing_requests)} replicas within {@code [min_replicas, max_replicas]}, where ongoing
 * is the deployment's requests running and queued averaged over {@code look_back_period}; it scales up only after
 * {@code upscale_delay} of consistent decisions to do so, and down only after {@code downscale_delay}.
 *
 * <p>A deployment of a fixed {@code num_replicas} has autoscaling {@link #OFF}: an explicit value, not null, so that no
 * reader null-checks; it equals no setting of autoscaling on (turning autoscaling on at its defaults is a change).
 *
 * @param enabled               whether the replica count follows the load; false only in {@link #OFF}
 * @param minReplicas           replicas always kept; 0 lets an idle deployment release its model (scale to zero)
 * @param maxReplicas           replicas never exceeded; at least 1 and at least {@code minReplicas}
 * @param initialReplicas       replicas the deployment starts with, or null for the default: {@code minReplicas}, but
 *                              at least 1 so that a new deployment loads its model once (its metadata is then known
 *                              and a model that cannot load is found at once), within {@code maxReplicas}
 * @param targetOngoingRequests requests running or queued per replica that the autoscaler aims for; default 2
 * @param upscaleDelay          how long decisions must consistently call for more replicas before they start;
 *                              default 30 s
 * @param downscaleDelay        how long decisions must consistently call for fewer before replicas stop; default 600 s
 * @param downscaleToZeroDelay  the delay of the last step, from one replica to none, or null for
 *                              {@code downscaleDelay}
 * @param lookBackPeriod        the window over which the ongoing requests are averaged; default 30 s
 * @param upscalingFactor       how much of the distance to the wanted count one upscale covers (Ray's smoothing);
 *                              in (0, 10], default 1
 * @param downscalingFactor     the same for a downscale; in (0, 1], default 1 (a downscale always removes at least
 *                              one replica)
 */
public record AutoscalingSpec(
        boolean enabled,
        int minReplicas,
        int maxReplicas,
        Integer initialReplicas,
        double targetOngoingRequests,
        Duration upscaleDelay,
        Duration downscaleDelay,
        Duration downscaleToZeroDelay,
        Duration lookBackPeriod,
        double upscalingFactor,
        double downscalingFactor) {

    public static final IntRange MIN_REPLICAS = new IntRange("min_replicas", 0, DeploymentSpec.NUM_REPLICAS.max());
    public static final IntRange MAX_REPLICAS = new IntRange("max_replicas", 1, DeploymentSpec.NUM_REPLICAS.max());
    public static final IntRange INITIAL_REPLICAS = new IntRange("initial_replicas", 0,
            DeploymentSpec.NUM_REPLICAS.max());
    public static final DurationRange UPSCALE_DELAY = new DurationRange("upscale_delay", Duration.ZERO,
            Duration.ofHours(1));
    public static final DurationRange DOWNSCALE_DELAY = new DurationRange("downscale_delay", Duration.ZERO,
            Duration.ofDays(1));
    public static final DurationRange DOWNSCALE_TO_ZERO_DELAY = new DurationRange("downscale_to_zero_delay",
            Duration.ZERO, Duration.ofDays(1));
    public static final DurationRange LOOK_BACK_PERIOD = new DurationRange("look_back_period", Duration.ofMillis(10),
            Duration.ofHours(1));
    /** Bounds of {@code target_ongoing_requests}: above zero, at most this. */
    public static final double MAX_TARGET_ONGOING_REQUESTS = 100_000;
    /** Bound of {@code upscaling_factor}: above zero, at most this. */
    public static final double MAX_UPSCALING_FACTOR = 10;

    /** Ray Serve's defaults, from one to ten replicas. */
    public static final AutoscalingSpec DEFAULTS = new AutoscalingSpec(1, 10, null, 2, Duration.ofSeconds(30),
            Duration.ofSeconds(600), null, Duration.ofSeconds(30), 1, 1);

    /**
     * Autoscaling off: a fixed {@code num_replicas}. The one off value, holding the defaults' settings (which the
     * config's field table reads as the defaults of a section turned on), so that off always equals off.
     */
    public static final AutoscalingSpec OFF = new AutoscalingSpec(false, 1, 10, null, 2, Duration.ofSeconds(30),
            Duration.ofSeconds(600), null, Duration.ofSeconds(30), 1, 1);

    public AutoscalingSpec {
        if (!enabled && OFF != null) { // OFF itself is built while OFF is still null
            throw new IllegalArgumentException("autoscaling off is AutoscalingSpec.OFF, whose settings do not change");
        }
        MIN_REPLICAS.check(minReplicas);
        MAX_REPLICAS.check(maxReplicas);
        if (maxReplicas < minReplicas) {
            throw new InvalidSpec("max_replicas", "is " + maxReplicas + " but min_replicas is " + minReplicas
                    + "; it must be at least min_replicas");
        }
        if (initialReplicas != null) {
            INITIAL_REPLICAS.check(initialReplicas);
            if (initialReplicas < minReplicas || initialReplicas > maxReplicas) {
                throw new InvalidSpec("initial_replicas", "is " + initialReplicas
                        + "; it must be between min_replicas (" + minReplicas + ") and max_replicas (" + maxReplicas
                        + ")");
            }
        }
        if (!(targetOngoingRequests > 0 && targetOngoingRequests <= MAX_TARGET_ONGOING_REQUESTS)) {
            throw new InvalidSpec("target_ongoing_requests", "must be above 0 and at most "
                    + (long) MAX_TARGET_ONGOING_REQUESTS + ", not " + targetOngoingRequests);
        }
        UPSCALE_DELAY.check(upscaleDelay);
        DOWNSCALE_DELAY.check(downscaleDelay);
        if (downscaleToZeroDelay != null) {
            DOWNSCALE_TO_ZERO_DELAY.check(downscaleToZeroDelay);
        }
        LOOK_BACK_PERIOD.check(lookBackPeriod);
        if (!(upscalingFactor > 0 && upscalingFactor <= MAX_UPSCALING_FACTOR)) {
            throw new InvalidSpec("upscaling_factor", "must be above 0 and at most " + (int) MAX_UPSCALING_FACTOR
                    + ", not " + upscalingFactor);
        }
        if (!(downscalingFactor > 0 && downscalingFactor <= 1)) {
            throw new InvalidSpec("downscaling_factor", "must be above 0 and at most 1, not " + downscalingFactor);
        }
    }

    /** Autoscaling on with these settings. */
    public AutoscalingSpec(int minReplicas, int maxReplicas, Integer initialReplicas, double targetOngoingRequests,
            Duration upscaleDelay, Duration downscaleDelay, Duration downscaleToZeroDelay, Duration lookBackPeriod,
            double upscalingFactor, double downscalingFactor) {
        this(true, minReplicas, maxReplicas, initialReplicas, targetOngoingRequests, upscaleDelay, downscaleDelay,
                downscaleToZeroDelay, lookBackPeriod, upscalingFactor, downscalingFactor);
    }

    /** The replicas a new deployment starts with: {@code initial_replicas}, or its default (see the record). */
    public int initial() {
        return initialReplicas != null ? initialReplicas : Math.min(maxReplicas, Math.max(1, minReplicas));
    }

    /** The delay of the step from one replica to none: {@code downscale_to_zero_delay}, or {@code downscale_delay}. */
    public Duration toZeroDelay() {
        return downscaleToZeroDelay != null ? downscaleToZeroDelay : downscaleDelay;
    }

    /** {@code replicas} within {@code [min_replicas, max_replicas]}. */
    public int clamp(int replicas) {
        return Math.max(minReplicas, Math.min(maxReplicas, replicas));
    }

    public AutoscalingSpec withMinReplicas(int next) {
        return next == minReplicas ? this : with(c -> c.minReplicas = next);
    }

    public AutoscalingSpec withMaxReplicas(int next) {
        return next == maxReplicas ? this : with(c -> c.maxReplicas = next);
    }

    public AutoscalingSpec withTargetOngoingRequests(double next) {
        return next == targetOngoingRequests ? this : with(c -> c.targetOngoingRequests = next);
    }

    /** The three delays and the look-back period at once (tests and benchmarks run them short). */
    public AutoscalingSpec withTiming(Duration upscale, Duration downscale, Duration toZero, Duration lookBack) {
        AutoscalingSpec next = with(c -> {
            c.upscaleDelay = upscale;
            c.downscaleDelay = downscale;
            c.downscaleToZeroDelay = toZero;
            c.lookBackPeriod = lookBack;
        });
        return next.equals(this) ? this : next;
    }

    public AutoscalingSpec withFactors(double upscaling, double downscaling) {
        return upscaling == upscalingFactor && downscaling == downscalingFactor ? this : with(c -> {
            c.upscalingFactor = upscaling;
            c.downscalingFactor = downscaling;
        });
    }

    public AutoscalingSpec withInitialReplicas(Integer next) {
        return Objects.equals(next, initialReplicas) ? this : with(c -> c.initialReplicas = next);
    }

    /**
     * This spec with what {@code change} sets, checked by the constructor: the one place besides the constructor that
     * lists every component, so that a wither names only what it changes (as {@code DeploymentSpec} does).
     */
    private AutoscalingSpec with(Consumer<Components> change) {
        Components c = new Components(this);
        change.accept(c);
        return new AutoscalingSpec(enabled, c.minReplicas, c.maxReplicas, c.initialReplicas, c.targetOngoingRequests,
                c.upscaleDelay, c.downscaleDelay, c.downscaleToZeroDelay, c.lookBackPeriod, c.upscalingFactor,
                c.downscalingFactor);
    }

    /** The components a derivation may change, starting as the spec's own; local to one {@link #with} call. */
    private static final class Components {
        int minReplicas;
        int maxReplicas;
        Integer initialReplicas;
        double targetOngoingRequests;
        Duration upscaleDelay;
        Duration downscaleDelay;
        Duration downscaleToZeroDelay;
        Duration lookBackPeriod;
        double upscalingFactor;
        double downscalingFactor;

        Components(AutoscalingSpec spec) {
            minReplicas = spec.minReplicas;
            maxReplicas = spec.maxReplicas;
            initialReplicas = spec.initialReplicas;
            targetOngoingRequests = spec.targetOngoingRequests;
            upscaleDelay = spec.upscaleDelay;
            downscaleDelay = spec.downscaleDelay;
            downscaleToZeroDelay = spec.downscaleToZeroDelay;
            lookBackPeriod = spec.lookBackPeriod;
            upscalingFactor = spec.upscalingFactor;
            downscalingFactor = spec.downscalingFactor;
        }
    }
}
