package dev.serval.api.health;

import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.ServedDeployment;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * {@code /q/health/ready}: UP when every configured deployment has at least its {@code min-ready-replicas} replicas
 * RUNNING, each warmed up by a real inference; DOWN again when a deployment loses them. Reads each deployment's
 * state; does no work of its own.
 */
@Readiness
@Singleton
public class DeploymentsReadiness implements HealthCheck {

    private final DeploymentRegistry deployments;

    DeploymentsReadiness(DeploymentRegistry deployments) {
        this.deployments = deployments;
    }

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("deployments").status(deployments.allReady());
        for (ServedDeployment served : deployments.all()) {
            if (served.multiplexed() != null) {
                response.withData(served.name(), "READY"); // its models load on demand
                continue;
            }
            response.withData(served.name(), served.deployment().state().name());
            served.deployment().failure().ifPresent(failure -> response.withData(served.name() + ".error", failure));
        }
        return response.build();
    }
}
