package dev.serval.api.config;

import dev.serval.deployment.DeploymentSpec;
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

    /** The deployments, by name. */
    Map<String, Deployment> deployments();

    interface Http {

        /** The largest request body accepted; larger ones get 413. */
        @WithName("max-body-size")
        @WithDefault("8M")
        MemorySize maxBodySize();
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

        @WithName("predictor-threads")
        @WithDefault("2")
        int predictorThreads();

        @WithName("intra-op-threads")
        @WithDefault("1")
        int intraOpThreads();

        @WithName("max-queued-inputs")
        @WithDefault("512")
        int maxQueuedInputs();

        @WithName("max-inputs-per-request")
        @WithDefault("256")
        int maxInputsPerRequest();

        @WithName("drain-timeout")
        @WithDefault("10s")
        Duration drainTimeout();

        /** The core spec for the deployment called {@code name}; validates every field. */
        default DeploymentSpec toSpec(String name) {
            return new DeploymentSpec(name, predictorThreads(), intraOpThreads(), maxQueuedInputs(),
                    maxInputsPerRequest(), drainTimeout());
        }
    }
}
