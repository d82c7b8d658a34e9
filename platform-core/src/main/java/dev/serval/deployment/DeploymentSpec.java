package dev.serval.deployment;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The desired shape of one deployment. Every bound is finite: a deployment never queues without limit.
 *
 * @param name                 the deployment (and model) name callers use, e.g. {@code all-minilm-l6-v2}
 * @param predictorThreads     predictor threads, each owning one predictor; default 2
 * @param intraOpThreads       ONNX Runtime threads inside one inference; default 1 (for short texts, two
 *                             single-threaded predictors beat one two-threaded predictor on two cores)
 * @param maxQueuedInputs      inputs admitted but not yet picked up by a predictor; past it, requests are
 *                             refused with {@code Overloaded}; default 512
 * @param maxInputsPerRequest  inputs one request may carry; at most {@code maxQueuedInputs}; default 256
 * @param drainTimeout         on shutdown, how long queued and running work may take to finish; default 10 s
 */
public record DeploymentSpec(
        String name,
        int predictorThreads,
        int intraOpThreads,
        int maxQueuedInputs,
        int maxInputsPerRequest,
        Duration drainTimeout) {

    private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?");

    public DeploymentSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(drainTimeout, "drainTimeout");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("deployment name '" + name
                    + "' must be 1-63 lower-case letters, digits, '.', '_' or '-', starting and ending alphanumeric");
        }
        requireAtLeast(name, "predictor-threads", predictorThreads, 1);
        requireAtLeast(name, "intra-op-threads", intraOpThreads, 1);
        requireAtLeast(name, "max-queued-inputs", maxQueuedInputs, 1);
        requireAtLeast(name, "max-inputs-per-request", maxInputsPerRequest, 1);
        if (maxInputsPerRequest > maxQueuedInputs) {
            throw new IllegalArgumentException("deployment '" + name + "': max-inputs-per-request ("
                    + maxInputsPerRequest + ") must not exceed max-queued-inputs (" + maxQueuedInputs + ")");
        }
        if (drainTimeout.isNegative()) {
            throw new IllegalArgumentException("deployment '" + name + "': drain-timeout must be >= 0, was " + drainTimeout);
        }
    }

    /** A spec with the documented defaults. */
    public static DeploymentSpec withDefaults(String name) {
        return new DeploymentSpec(name, 2, 1, 512, 256, Duration.ofSeconds(10));
    }

    private static void requireAtLeast(String name, String field, int value, int minimum) {
        if (value < minimum) {
            throw new IllegalArgumentException("deployment '" + name + "': " + field + " must be >= " + minimum
                    + ", was " + value);
        }
    }
}
