package dev.serval.api.config;

import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Everything Serval knows about one deployment, from whichever source set it (application properties, the YAML config
 * file, the management API, the state directory): the core {@link DeploymentSpec} plus what the edge and the model
 * loader need. Its field names are the snake_case keys of the config file and the management API
 * ({@link #toMap()}, {@link ConfigParser}); docs/configuration.md documents each one.
 *
 * @param maxLength      tokens kept per text, or 0 for the model descriptor's {@code max_length}
 * @param longInputs     {@code truncate} or {@code chunk}
 * @param chunkReduction how a classifier combines the scores of a chunked text: {@code mean} or {@code max}
 * @param maxChunksPerInput windows one text may split into under {@code chunk}; longer texts are refused (400)
 */
public record DeploymentConfig(
        String name,
        String model,
        String version,
        int maxLength,
        String longInputs,
        int chunkOverlap,
        String chunkReduction,
        int maxChunksPerInput,
        int numReplicas,
        int minReadyReplicas,
        int maxOngoingRequests,
        int maxQueuedRequests,
        int predictorThreads,
        int intraOpThreads,
        int maxInputsPerRequest,
        Duration healthCheckPeriod,
        int healthCheckFailureThreshold,
        Duration gracefulShutdownTimeout,
        Duration requestTimeout,
        boolean batchInvariance,
        int maxBatchSize,
        Duration batchWaitTimeout,
        double rollingUpdateFraction) {

    public DeploymentConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(version, "version");
    }

    /** The defaults of every field but name and model (see docs/configuration.md). */
    public static Map<String, Object> defaults() {
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("version", "1");
        defaults.put("max_length", 0);
        defaults.put("long_inputs", "truncate");
        defaults.put("chunk_overlap", 32);
        defaults.put("chunk_reduction", "mean");
        defaults.put("max_chunks_per_input", 64);
        defaults.put("num_replicas", 1);
        defaults.put("min_ready_replicas", 1);
        defaults.put("max_ongoing_requests", 8);
        defaults.put("max_queued_requests", 256);
        defaults.put("predictor_threads", 2);
        defaults.put("intra_op_threads", 1);
        defaults.put("max_inputs_per_request", 256);
        defaults.put("health_check_period", "10s");
        defaults.put("health_check_failure_threshold", 3);
        defaults.put("graceful_shutdown_timeout", "10s");
        defaults.put("request_timeout", "30s");
        defaults.put("batch_invariance", true);
        defaults.put("max_batch_size", 32);
        defaults.put("batch_wait_timeout", "0s");
        defaults.put("rolling_update_fraction", 0.25);
        return defaults;
    }

    /**
     * The core spec. Its model reference carries the loader options too, so that changing one of them (max length,
     * long-input policy) rolls the replicas like a new version does.
     *
     * @throws IllegalArgumentException naming the field when a value is out of its bounds
     */
    public DeploymentSpec toSpec() {
        return new DeploymentSpec(name, reference().text(), version, numReplicas, maxOngoingRequests, maxQueuedRequests,
                predictorThreads, intraOpThreads, maxInputsPerRequest, healthCheckPeriod, healthCheckFailureThreshold,
                gracefulShutdownTimeout, batchInvariance, maxBatchSize, batchWaitTimeout, rollingUpdateFraction);
    }

    /** The model name plus the options its loader reads ({@link ModelReference#text()} is the spec's model). */
    public ModelReference reference() {
        return new ModelReference(model, maxLength, longInputs, chunkOverlap, chunkReduction, maxChunksPerInput);
    }

    /** The fields under their config-file keys, durations as text: what the API shows and the state file stores. */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("name", name);
        map.put("model", model);
        map.put("version", version);
        map.put("max_length", maxLength);
        map.put("long_inputs", longInputs);
        map.put("chunk_overlap", chunkOverlap);
        map.put("chunk_reduction", chunkReduction);
        map.put("max_chunks_per_input", maxChunksPerInput);
        map.put("num_replicas", numReplicas);
        map.put("min_ready_replicas", minReadyReplicas);
        map.put("max_ongoing_requests", maxOngoingRequests);
        map.put("max_queued_requests", maxQueuedRequests);
        map.put("predictor_threads", predictorThreads);
        map.put("intra_op_threads", intraOpThreads);
        map.put("max_inputs_per_request", maxInputsPerRequest);
        map.put("health_check_period", text(healthCheckPeriod));
        map.put("health_check_failure_threshold", healthCheckFailureThreshold);
        map.put("graceful_shutdown_timeout", text(gracefulShutdownTimeout));
        map.put("request_timeout", text(requestTimeout));
        map.put("batch_invariance", batchInvariance);
        map.put("max_batch_size", maxBatchSize);
        map.put("batch_wait_timeout", text(batchWaitTimeout));
        map.put("rolling_update_fraction", rollingUpdateFraction);
        return map;
    }

    /** A duration as the config file writes it: {@code 2ms}, {@code 30s}. */
    static String text(Duration duration) {
        long millis = duration.toMillis();
        if (Duration.ofMillis(millis).equals(duration)) {
            return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
        }
        return duration.toString();
    }
}
