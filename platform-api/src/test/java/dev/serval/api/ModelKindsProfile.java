package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval with one deployment of each model kind from the test repository: {@code mlp} and {@code dtypes} (tensor),
 * {@code classifier} (text-classification), {@code echo} (noop), beside the default MiniLM.
 */
public class ModelKindsProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        return Map.of(
                "serval.deployments.mlp.model", "tiny-mlp",
                "serval.deployments.mlp.predictor-threads", "1",
                "serval.deployments.dtypes.model", "tiny-dtypes",
                "serval.deployments.dtypes.predictor-threads", "1",
                "serval.deployments.classifier.model", "tiny-classifier",
                "serval.deployments.classifier.predictor-threads", "1",
                "serval.deployments.echo.model", "noop",
                "serval.deployments.echo.predictor-threads", "1");
    }
}
