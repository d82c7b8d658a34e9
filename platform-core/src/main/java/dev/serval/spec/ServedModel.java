package dev.serval.spec;

import java.util.Objects;

/**
 * What a replica's answer to one input depends on besides the input: the model with its loader options (name,
 * {@code max_length}, long-input mode and chunk settings), its version, and the settings its session is built with.
 * Replicas whose values are equal share one loaded model ({@code SharedModels}) and give one input the same result, so
 * it is the model part of a result cache's key: an entry made by one served model is never an answer of another, and
 * a rolling update (which changes this value) never serves the old version's results for the new one.
 *
 * @param model           the model reference and its loader options
 * @param version         the model version
 * @param intraOpThreads  the session's threads
 * @param batchInvariance whether an input's result may not depend on what it runs with
 */
public record ServedModel(ModelReference model, String version, int intraOpThreads, boolean batchInvariance) {

    public ServedModel {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(version, "version");
    }

    /** The model the replicas of {@code spec} serve. */
    public static ServedModel of(DeploymentSpec spec) {
        return new ServedModel(spec.model(), spec.version(), spec.predictors().intraOpThreads(),
                spec.batching().batchInvariance());
    }
}
