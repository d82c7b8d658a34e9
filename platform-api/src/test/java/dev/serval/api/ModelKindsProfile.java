package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval with one deployment of each model kind from the test repository: {@code mlp} and {@code dtypes} (tensor),
 * {@code classifier} (text-classification), {@code reranker}
 * (text-rerank), {@code echo} (noop), beside the default MiniLM.
 */
public class ModelKindsProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        return Map.ofEntries(
                Map.entry("serval.deployments.mlp.model", "tiny-mlp"),
                Map.entry("serval.deployments.mlp.predictor-threads", "1"),
                Map.entry("serval.deployments.dtypes.model", "tiny-dtypes"),
                Map.entry("serval.deployments.dtypes.predictor-threads", "1"),
                Map.entry("serval.deployments.classifier.model", "tiny-classifier"),
                Map.entry("serval.deployments.classifier.predictor-threads", "1"),
                Map.entry("serval.deployments.reranker.model", "tiny-reranker"),
                Map.entry("serval.deployments.reranker.predictor-threads", "1"),
                Map.entry("serval.deployments.matryoshka.model", "matryoshka-encoder"),
                Map.entry("serval.deployments.matryoshka.predictor-threads", "1"),
                Map.entry("serval.deployments.echo.model", "noop"),
                Map.entry("serval.deployments.echo.predictor-threads", "1"));
    }
}
