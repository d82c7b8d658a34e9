package dev.serval.api.health;

import dev.serval.api.serving.DeploymentRegistry;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * {@code /q/health/live}: DOWN once the failure monitor gave up on this node (a deployment kept failing after its
 * replicas were replaced), so that the orchestrator restarts the process. Reads one field.
 */
@Liveness
@Singleton
public class FailureMonitorLiveness implements HealthCheck {

    private final DeploymentRegistry deployments;

    FailureMonitorLiveness(DeploymentRegistry deployments) {
        this.deployments = deployments;
    }

    @Override
    public HealthCheckResponse call() {
        if (deployments.live()) {
            return HealthCheckResponse.named("failure-monitor").up()
                    .withData("enabled", deployments.failureMonitorEnabled()).build();
        }
        return HealthCheckResponse.named("failure-monitor").down().withData("reason", deployments.notLiveReason())
                .build();
    }
}
