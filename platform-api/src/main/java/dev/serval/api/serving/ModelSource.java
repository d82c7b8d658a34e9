package dev.serval.api.serving;

import dev.serval.api.config.DeploymentConfig;
import dev.serval.api.repository.ModelKind;
import dev.serval.predictor.Model;

/**
 * Turns a deployment's {@code model} and {@code version} into a loaded model. CDI beans implementing this are
 * consulted in turn; the first that {@linkplain #accepts accepts} the model name serves it. Serval's own source is
 * the model repository ({@link RepositoryModelSource}); tests add sources of fake models.
 */
public interface ModelSource {

    boolean accepts(String model);

    /**
     * The kind of the model a config names, checked before the config is applied (so a missing model or a bad
     * descriptor refuses the config instead of failing replicas later).
     *
     * @throws IllegalArgumentException naming the model and the problem
     */
    ModelKind kind(DeploymentConfig config);

    /** Loads the model; runs on a launcher thread, never on an HTTP thread. */
    Model<?, ?> load(DeploymentConfig config) throws Exception;
}
