package dev.serval.api.config;

import dev.serval.spec.DeploymentSpec;
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

    /** Where bundled model files are extracted once; must be writable. */
    @WithName("model-dir")
    @WithDefault("${user.home}/.cache/serval/models")
    Path modelDir();

    Http http();

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

        /**
         * The model: {@code bundled:all-minilm-l6-v2-q} for the model shipped with Serval, or a directory
         * holding {@code model.onnx} and {@code tokenizer.json}.
         */
        String model();

        /** Tokens kept per text, special tokens included; longer texts are truncated. */
        @WithName("max-length")
        @WithDefault("256")
        int maxLength();

        /** The model version; changing it (at run time, through a future management API) rolls the replicas. */
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

        default dev.serval.predictor.LongInputs toLongInputs() {
            return longInputs() == LongInputPolicy.CHUNK ? dev.serval.predictor.LongInputs.chunk(chunkOverlap())
                    : dev.serval.predictor.LongInputs.truncate();
        }

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

        /** How long a predictor may wait to fill a batch while another predictor of its replica is busy. */
        @WithName("batch-wait-timeout")
        @WithDefault("2ms")
        Duration batchWaitTimeout();

        /** The core spec for the deployment called {@code name}; validates every field. */
        default DeploymentSpec toSpec(String name) {
            return new DeploymentSpec(name, model(), version(), numReplicas(), maxOngoingRequests(), maxQueuedRequests(),
                    predictorThreads(), intraOpThreads(), maxInputsPerRequest(), healthCheckPeriod(),
                    healthCheckFailureThreshold(), gracefulShutdownTimeout(), batchInvariance(), maxBatchSize(),
                    batchWaitTimeout());
        }
    }
}
