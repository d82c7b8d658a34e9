package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;

/**
 * How replicas are replaced and stopped.
 *
 * @param rollingUpdateFraction   during a rolling update (new model, version or replica shape), the share of
 *                                {@code numReplicas} started at a time (at least one replica); old replicas stop as
 *                                new ones run; in (0, 1], default 0.25
 * @param gracefulShutdownTimeout how long a STOPPING replica may drain before it is stopped; default 10 s
 */
public record RolloutSpec(double rollingUpdateFraction, Duration gracefulShutdownTimeout) {

    public static final String ROLLING_UPDATE_FRACTION = "rolling_update_fraction";
    public static final DurationRange GRACEFUL_SHUTDOWN_TIMEOUT = new DurationRange("graceful_shutdown_timeout",
            Duration.ZERO, Duration.ofHours(1));

    public static final RolloutSpec DEFAULTS = new RolloutSpec(0.25, Duration.ofSeconds(10));

    public RolloutSpec {
        if (!(rollingUpdateFraction > 0 && rollingUpdateFraction <= 1)) {
            throw new InvalidSpec(ROLLING_UPDATE_FRACTION, "must be in (0, 1], not " + rollingUpdateFraction);
        }
        GRACEFUL_SHUTDOWN_TIMEOUT.check(gracefulShutdownTimeout);
    }

    public RolloutSpec withRollingUpdateFraction(double fraction) {
        return fraction == rollingUpdateFraction ? this : new RolloutSpec(fraction, gracefulShutdownTimeout);
    }

    public RolloutSpec withGracefulShutdownTimeout(Duration timeout) {
        return Objects.equals(timeout, gracefulShutdownTimeout) ? this
                : new RolloutSpec(rollingUpdateFraction, timeout);
    }
}
