package dev.serval.api.config;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Serval's settings under {@code serval.*} (application.properties, environment variables, system
 * properties). Read once at startup and converted into core records; see docs/configuration.md.
 */
@ConfigMapping(prefix = "serval")
public interface ServalConfig {

    Repository repository();

    /**
     * A YAML file of deployments ({@code deployments: [...]}, see docs/configuration.md). When set, its deployments
     * replace the {@code serval.deployments.*} properties.
     */
    @WithName("config-file")
    java.util.Optional<Path> configFile();

    /**
     * A writable directory where Serval keeps the last applied deployments config ({@code applied-config.yaml}),
     * re-applied after a restart in place of the config file and properties. Unset: changes made through the
     * management API last until the process stops.
     */
    @WithName("state-dir")
    java.util.Optional<Path> stateDir();

    Api api();

    interface Repository {

        /** The model repository: one folder per model, one subfolder per version. Created at startup if missing. */
        @WithDefault("${user.home}/.cache/serval/repository")
        Path path();
    }

    /** The management API's authentication: see docs/security.md. */
    interface Api {

        /**
         * The token management calls ({@code /api/*}, {@code /v2/repository/*}) need as
         * {@code Authorization: Bearer <token>}. Unset: Serval generates one at start into {@link #tokenFile()}.
         */
        java.util.Optional<String> token();

        /** Where a generated token is written, readable by Serval's user only. */
        @WithName("token-file")
        @WithDefault("${user.home}/.cache/serval/api-token")
        Path tokenFile();

        /** {@code false} turns the token check off: anyone who reaches the port may change the deployments. */
        @WithName("auth-enabled")
        @WithDefault("true")
        boolean authEnabled();
    }

    Http http();

    Limits limits();

    /** Bounds across all deployments, so that no config can ask the server for more threads than it can run. */
    interface Limits {

        /**
         * Predictor threads across every deployment (the sum of {@code num_replicas x predictor_threads}); a change
         * that would pass it is a 400 naming the limit.
         */
        @WithName("max-predictor-threads")
        @WithDefault("256")
        int maxPredictorThreads();
    }

    @WithName("failure-monitor")
    FailureMonitor failureMonitor();

    /** Console logs as one JSON object per line (with the MDC, so the request id), instead of text. */
    @WithName("log.json")
    @WithDefault("false")
    boolean jsonLogs();

    /** The deployments, by name. */
    Map<String, Deployment> deployments();

    interface Http {

        /** The largest request body accepted; larger ones get 413. */
        @WithName("max-body-size")
        @WithDefault("8M")
        MemorySize maxBodySize();

        /**
         * Inference request bytes the server holds in memory at once (bodies being read, inputs queued or running);
         * past it, new requests get 503 + Retry-After on their headers.
         */
        @WithName("max-buffered-bytes")
        @WithDefault("256M")
        MemorySize maxBufferedBytes();

        /** Input tensors, and outputs asked for, per OIP inference request; more is a 400. */
        @WithName("max-tensors-per-request")
        @WithDefault("64")
        int maxTensorsPerRequest();

        /** Elements one input tensor's shape may declare; more is a 400. */
        @WithName("max-tensor-elements")
        @WithDefault("16777216")
        long maxTensorElements();

        /** Texts per OpenAI embeddings request (OpenAI's own limit); more is a 400. */
        @WithName("max-texts-per-request")
        @WithDefault("2048")
        int maxTextsPerRequest();
    }

    /** What a text model does with texts over its maximum length. */
    enum LongInputPolicy {
        TRUNCATE, CHUNK
    }

    /** The failure monitor: see docs/configuration.md. */
    interface FailureMonitor {

        @WithDefault("true")
        boolean enabled();

        @WithDefault("60s")
        Duration window();

        @WithDefault("0.5")
        double threshold();

        @WithName("min-requests")
        @WithDefault("20")
        int minRequests();

        @WithName("max-replacements")
        @WithDefault("2")
        int maxReplacements();

        default dev.serval.health.FailureMonitor.Settings toSettings() {
            return new dev.serval.health.FailureMonitor.Settings(enabled(), window(), threshold(), minRequests(),
                    maxReplacements());
        }
    }

    interface Deployment {

        /** The model's name in the model repository, e.g. {@code all-minilm-l6-v2}. */
        String model();

        /** Tokens kept per text, special tokens included; 0 takes the model descriptor's {@code max_length}. */
        @WithName("max-length")
        @WithDefault("0")
        int maxLength();

        /** The model version (a folder of the model in the repository); changing it rolls the replicas. */
        @WithDefault("1")
        String version();

        @WithName("num-replicas")
        @WithDefault("1")
        int numReplicas();

        /** Routable replicas this deployment needs for the server to report ready. */
        @WithName("min-ready-replicas")
        @WithDefault("1")
        int minReadyReplicas();

        @WithName("max-ongoing-requests")
        @WithDefault("8")
        int maxOngoingRequests();

        @WithName("max-queued-requests")
        @WithDefault("256")
        int maxQueuedRequests();

        /**
         * Texts over {@code max-length} tokens: {@code truncate} (sentence-transformers' behaviour) or {@code chunk}
         * (overlapping windows, embeddings averaged and renormalised).
         */
        @WithName("long-inputs")
        @WithDefault("truncate")
        LongInputPolicy longInputs();

        /** Tokens each window shares with the previous one, with {@code long-inputs=chunk}. */
        @WithName("chunk-overlap")
        @WithDefault("32")
        int chunkOverlap();

        /** How a classifier combines the scores of a chunked text: {@code mean} or {@code max}. */
        @WithName("chunk-reduction")
        @WithDefault("mean")
        String chunkReduction();

        /** Windows one text may split into with {@code long-inputs=chunk}; a text needing more is refused (400). */
        @WithName("max-chunks-per-input")
        @WithDefault("64")
        int maxChunksPerInput();

        /** The share of the replicas a rolling update (new model or version) replaces at a time. */
        @WithName("rolling-update-fraction")
        @WithDefault("0.25")
        double rollingUpdateFraction();

        @WithName("predictor-threads")
        @WithDefault("2")
        int predictorThreads();

        @WithName("intra-op-threads")
        @WithDefault("1")
        int intraOpThreads();

        @WithName("max-inputs-per-request")
        @WithDefault("256")
        int maxInputsPerRequest();

        @WithName("health-check-period")
        @WithDefault("10s")
        Duration healthCheckPeriod();

        @WithName("health-check-failure-threshold")
        @WithDefault("3")
        int healthCheckFailureThreshold();

        @WithName("graceful-shutdown-timeout")
        @WithDefault("10s")
        Duration gracefulShutdownTimeout();

        /**
         * How long a request may take, end to end, before it gets 504 and its unstarted work is dropped; a client
         * may ask for less (x-request-timeout-ms, or the OIP timeout parameter).
         */
        @WithName("request-timeout")
        @WithDefault("30s")
        Duration requestTimeout();

        /** Whether a text's output must not depend on what it runs with (see docs/design-decisions.md). */
        @WithName("batch-invariance")
        @WithDefault("true")
        boolean batchInvariance();

        /** Texts one inference may take when the model batches. */
        @WithName("max-batch-size")
        @WithDefault("32")
        int maxBatchSize();

        /**
         * How long a predictor may wait to fill a batch while another predictor of its replica is busy and inputs are
         * still queued.
         */
        @WithName("batch-wait-timeout")
        @WithDefault("0s")
        Duration batchWaitTimeout();

        /** The deployment called {@code name}, checked like a config file's entry (field names in snake_case). */
        default DeploymentConfig toConfig(String name) {
            java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();
            fields.put("model", model());
            fields.put("version", version());
            fields.put("max_length", maxLength());
            fields.put("long_inputs", longInputs().name().toLowerCase(java.util.Locale.ROOT));
            fields.put("chunk_overlap", chunkOverlap());
            fields.put("chunk_reduction", chunkReduction());
            fields.put("max_chunks_per_input", maxChunksPerInput());
            fields.put("num_replicas", numReplicas());
            fields.put("min_ready_replicas", minReadyReplicas());
            fields.put("max_ongoing_requests", maxOngoingRequests());
            fields.put("max_queued_requests", maxQueuedRequests());
            fields.put("predictor_threads", predictorThreads());
            fields.put("intra_op_threads", intraOpThreads());
            fields.put("max_inputs_per_request", maxInputsPerRequest());
            fields.put("health_check_period", healthCheckPeriod().toString());
            fields.put("health_check_failure_threshold", healthCheckFailureThreshold());
            fields.put("graceful_shutdown_timeout", gracefulShutdownTimeout().toString());
            fields.put("request_timeout", requestTimeout().toString());
            fields.put("batch_invariance", batchInvariance());
            fields.put("max_batch_size", maxBatchSize());
            fields.put("batch_wait_timeout", batchWaitTimeout().toString());
            fields.put("rolling_update_fraction", rollingUpdateFraction());
            return ConfigParser.deployment(name, new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(fields),
                    "serval.deployments." + name);
        }
    }
}
