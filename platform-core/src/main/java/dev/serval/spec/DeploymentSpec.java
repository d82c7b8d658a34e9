package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The desired state of one deployment. Validated on construction; every bound is finite, so a deployment
 * never queues or waits without limit. Defaults ({@link #defaults}) are documented in docs/configuration.md.
 *
 * @param name                        what callers call the model, e.g. {@code all-minilm-l6-v2}
 * @param model                       the model reference, resolved by the application (the repository model name
 *                                    plus its loader options, e.g. {@code all-minilm-l6-v2?max_length=0&...})
 * @param version                     the model version; changing it rolls the replicas over to the new one
 * @param numReplicas                 replicas to keep RUNNING; default 1
 * @param maxOngoingRequests          requests one replica works on at once (admitted by CAS); default 8
 * @param maxQueuedRequests           requests the deployment holds while every replica is full; past it,
 *                                    requests are refused with {@code Overloaded}; default 256
 * @param predictorThreads            predictor threads per replica, each owning one predictor; default 2
 * @param intraOpThreads              ONNX Runtime threads inside one inference; default 1
 * @param maxInputsPerRequest         inputs one request may carry; default 256
 * @param healthCheckPeriod           how often each replica runs the model's probe input; default 10 s
 * @param healthCheckFailureThreshold consecutive failed probes or inferences that make a replica RECOVERING; default 3
 * @param gracefulShutdownTimeout     how long a STOPPING replica may drain before it is stopped; default 10 s
 * @param batchInvariance             whether an input's output must not depend on what it runs with; default true
 * @param maxBatchSize                inputs one inference may take when the model batches; default 32
 * @param batchWaitTimeout            how long a predictor may wait to fill a batch while another predictor of its
 *                                    replica is busy and inputs are still queued (an idle replica never waits, nor
 *                                    does a predictor whose take emptied the queue); default 0: a batch is what is
 *                                    queued when a predictor comes free
 * @param rollingUpdateFraction       during a rolling update (new model or version), the share of
 *                                    {@code numReplicas} started at a time (at least one replica); old replicas stop
 *                                    as new ones run; in (0, 1], default 0.25
 */
public record DeploymentSpec(
        String name,
        String model,
        String version,
        int numReplicas,
        int maxOngoingRequests,
        int maxQueuedRequests,
        int predictorThreads,
        int intraOpThreads,
        int maxInputsPerRequest,
        Duration healthCheckPeriod,
        int healthCheckFailureThreshold,
        Duration gracefulShutdownTimeout,
        boolean batchInvariance,
        int maxBatchSize,
        Duration batchWaitTimeout,
        double rollingUpdateFraction) {

    private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?");

    public DeploymentSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(healthCheckPeriod, "healthCheckPeriod");
        Objects.requireNonNull(gracefulShutdownTimeout, "gracefulShutdownTimeout");
        Objects.requireNonNull(batchWaitTimeout, "batchWaitTimeout");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("deployment name '" + name
                    + "' must be 1-63 lower-case letters, digits, '.', '_' or '-', starting and ending alphanumeric");
        }
        if (version.isBlank()) {
            throw new IllegalArgumentException("deployment '" + name + "': version must not be blank");
        }
        requireBetween(name, "num-replicas", numReplicas, 0, 1024);
        requireBetween(name, "max-ongoing-requests", maxOngoingRequests, 1, 1_000_000);
        requireBetween(name, "max-queued-requests", maxQueuedRequests, 0, 1_000_000);
        requireBetween(name, "predictor-threads", predictorThreads, 1, 1024);
        requireBetween(name, "intra-op-threads", intraOpThreads, 1, 1024);
        requireBetween(name, "max-inputs-per-request", maxInputsPerRequest, 1, 1_000_000);
        requireBetween(name, "health-check-failure-threshold", healthCheckFailureThreshold, 1, 1000);
        requireBetween(name, "max-batch-size", maxBatchSize, 1, 1024);
        if (batchWaitTimeout.isNegative() || batchWaitTimeout.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("deployment '" + name + "': batch-wait-timeout must be between 0 and 1s, was "
                    + batchWaitTimeout);
        }
        if (!(rollingUpdateFraction > 0 && rollingUpdateFraction <= 1)) {
            throw new IllegalArgumentException("deployment '" + name + "': rolling-update-fraction must be in (0, 1], was "
                    + rollingUpdateFraction);
        }
        if (healthCheckPeriod.compareTo(Duration.ofMillis(10)) < 0) {
            throw new IllegalArgumentException("deployment '" + name + "': health-check-period must be >= 10ms, was "
                    + healthCheckPeriod);
        }
        if (gracefulShutdownTimeout.isNegative()) {
            throw new IllegalArgumentException("deployment '" + name + "': graceful-shutdown-timeout must be >= 0, was "
                    + gracefulShutdownTimeout);
        }
    }

    /** A spec that rolls updates a quarter of its replicas at a time (the default). */
    public DeploymentSpec(String name, String model, String version, int numReplicas, int maxOngoingRequests,
            int maxQueuedRequests, int predictorThreads, int intraOpThreads, int maxInputsPerRequest,
            Duration healthCheckPeriod, int healthCheckFailureThreshold, Duration gracefulShutdownTimeout,
            boolean batchInvariance, int maxBatchSize, Duration batchWaitTimeout) {
        this(name, model, version, numReplicas, maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads,
                maxInputsPerRequest, healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout,
                batchInvariance, maxBatchSize, batchWaitTimeout, 0.25);
    }

    /** A spec with batch invariance on, batches of up to 32 and no batch wait (the defaults). */
    public DeploymentSpec(String name, String model, String version, int numReplicas, int maxOngoingRequests,
            int maxQueuedRequests, int predictorThreads, int intraOpThreads, int maxInputsPerRequest,
            Duration healthCheckPeriod, int healthCheckFailureThreshold, Duration gracefulShutdownTimeout) {
        this(name, model, version, numReplicas, maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads,
                maxInputsPerRequest, healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, true, 32,
                Duration.ZERO);
    }

    /** A spec with the documented defaults. */
    public static DeploymentSpec defaults(String name, String model) {
        return new DeploymentSpec(name, model, "1", 1, 8, 256, 2, 1, 256,
                Duration.ofSeconds(10), 3, Duration.ofSeconds(10));
    }

    public DeploymentSpec withNumReplicas(int replicas) {
        return replicas == numReplicas ? this : new DeploymentSpec(name, model, version, replicas, maxOngoingRequests,
                maxQueuedRequests, predictorThreads, intraOpThreads, maxInputsPerRequest, healthCheckPeriod,
                healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withVersion(String newVersion) {
        return newVersion.equals(version) ? this : new DeploymentSpec(name, model, newVersion, numReplicas,
                maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withAdmission(int ongoing, int queued) {
        return ongoing == maxOngoingRequests && queued == maxQueuedRequests ? this : new DeploymentSpec(name, model,
                version, numReplicas, ongoing, queued, predictorThreads, intraOpThreads, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withPredictors(int threads, int intraOp) {
        return threads == predictorThreads && intraOp == intraOpThreads ? this : new DeploymentSpec(name, model,
                version, numReplicas, maxOngoingRequests, maxQueuedRequests, threads, intraOp, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withHealthCheck(Duration period, int failureThreshold) {
        return period.equals(healthCheckPeriod) && failureThreshold == healthCheckFailureThreshold ? this
                : new DeploymentSpec(name, model, version, numReplicas, maxOngoingRequests, maxQueuedRequests,
                        predictorThreads, intraOpThreads, maxInputsPerRequest, period, failureThreshold,
                        gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withGracefulShutdownTimeout(Duration timeout) {
        return timeout.equals(gracefulShutdownTimeout) ? this : new DeploymentSpec(name, model, version, numReplicas,
                maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, timeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withBatching(boolean invariance, int batchSize) {
        return invariance == batchInvariance && batchSize == maxBatchSize ? this : new DeploymentSpec(name, model,
                version, numReplicas, maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads,
                maxInputsPerRequest, healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, invariance,
                batchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    public DeploymentSpec withBatchWait(Duration wait) {
        return wait.equals(batchWaitTimeout) ? this : new DeploymentSpec(name, model, version, numReplicas,
                maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize,
                wait, rollingUpdateFraction);
    }

    public DeploymentSpec withRollingUpdateFraction(double fraction) {
        return fraction == rollingUpdateFraction ? this : new DeploymentSpec(name, model, version, numReplicas,
                maxOngoingRequests, maxQueuedRequests, predictorThreads, intraOpThreads, maxInputsPerRequest,
                healthCheckPeriod, healthCheckFailureThreshold, gracefulShutdownTimeout, batchInvariance, maxBatchSize,
                batchWaitTimeout, fraction);
    }

    /** Replicas a rolling update starts at a time: {@code rollingUpdateFraction} of {@code numReplicas}, at least 1. */
    public int rollingUpdateBatch() {
        return Math.max(1, (int) Math.ceil(rollingUpdateFraction * numReplicas));
    }

    /**
     * Whether replicas built for {@code other} can keep serving under this spec: same model, version, threads,
     * admission limits and batch invariance. The batch size and batch wait are not part of the shape: running
     * replicas take them over in place.
     */
    public boolean sameReplicaShape(DeploymentSpec other) {
        return model.equals(other.model) && version.equals(other.version) && predictorThreads == other.predictorThreads
                && intraOpThreads == other.intraOpThreads && maxOngoingRequests == other.maxOngoingRequests
                && maxInputsPerRequest == other.maxInputsPerRequest && batchInvariance == other.batchInvariance;
    }

    private static void requireBetween(String name, String field, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException("deployment '" + name + "': " + field + " must be between " + min
                    + " and " + max + ", was " + value);
        }
    }
}
