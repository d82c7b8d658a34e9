package dev.serval.api.serving;

import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.spec.DeploymentSpec;

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
    ModelKind kind(DeploymentSpec spec);

    /**
     * Loads the model; runs on a launcher thread, never on an HTTP thread. Reads only the spec's {@code model()} (the
     * model reference with its loader options), {@code version}, intra-op threads and batch invariance: the fields
     * that make the key under which replicas share a loaded model (see {@code SharedModels}). The spec may be
     * older than the deployment's current config; it is the one to load.
     */
    Model<?, ?> load(DeploymentSpec spec) throws Exception;
}
