package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval with, beside the default MiniLM, {@code echo} (the noop model) autoscaled from one replica down to zero after
 * a second of no load, declared as properties ({@code serval.deployments.echo.autoscaling.*}).
 */
public class AutoscalingProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        return Map.of(
                "serval.deployments.echo.model", "noop",
                "serval.deployments.echo.predictor-threads", "1",
                "serval.deployments.echo.autoscaling.min-replicas", "0",
                "serval.deployments.echo.autoscaling.max-replicas", "2",
                "serval.deployments.echo.autoscaling.upscale-delay", "0s",
                "serval.deployments.echo.autoscaling.downscale-delay", "1s",
                "serval.deployments.echo.autoscaling.look-back-period", "200ms",
                "serval.autoscaling.period", "50ms");
    }
}
