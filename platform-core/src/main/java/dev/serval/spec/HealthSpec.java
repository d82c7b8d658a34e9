package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;

/**
 * How a deployment's replicas are watched, and how many must serve for it to count as ready.
 *
 * @param healthCheckPeriod           how often each replica runs the model's probe input; default 10 s
 * @param healthCheckFailureThreshold consecutive failed probes or inferences that make a replica RECOVERING; default 3
 * @param minReadyReplicas            routable replicas the deployment needs to report ready (the edge's readiness
 *                                    checks read it; the config refuses more than {@code num_replicas}); default 1
 */
public record HealthSpec(Duration healthCheckPeriod, int healthCheckFailureThreshold, int minReadyReplicas) {

    public static final DurationRange HEALTH_CHECK_PERIOD = new DurationRange("health_check_period",
            Duration.ofMillis(10), Duration.ofDays(1));
    public static final IntRange HEALTH_CHECK_FAILURE_THRESHOLD = new IntRange("health_check_failure_threshold", 1,
            1000);
    public static final IntRange MIN_READY_REPLICAS = new IntRange("min_ready_replicas", 0,
            DeploymentSpec.NUM_REPLICAS.max());

    public static final HealthSpec DEFAULTS = new HealthSpec(Duration.ofSeconds(10), 3, 1);

    public HealthSpec {
        HEALTH_CHECK_PERIOD.check(healthCheckPeriod);
        HEALTH_CHECK_FAILURE_THRESHOLD.check(healthCheckFailureThreshold);
        MIN_READY_REPLICAS.check(minReadyReplicas);
    }

    public HealthSpec withHealthCheckPeriod(Duration period) {
        return Objects.equals(period, healthCheckPeriod) ? this
                : new HealthSpec(period, healthCheckFailureThreshold, minReadyReplicas);
    }

    public HealthSpec withHealthCheckFailureThreshold(int threshold) {
        return threshold == healthCheckFailureThreshold ? this
                : new HealthSpec(healthCheckPeriod, threshold, minReadyReplicas);
    }

    public HealthSpec withMinReadyReplicas(int replicas) {
        return replicas == minReadyReplicas ? this
                : new HealthSpec(healthCheckPeriod, healthCheckFailureThreshold, replicas);
    }
}
