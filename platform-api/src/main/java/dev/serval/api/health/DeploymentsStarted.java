package dev.serval.api.health;

import dev.serval.api.serving.DeploymentRegistry;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Startup;

/**
 * {@code /q/health/started}: UP once every deployment has reached the state it was asked for: a replica loaded,
 * warmed up and routable, or none wanted (created at zero, or multiplexed: models load on demand). A
 * Kubernetes startup probe on it gives a slow model load time without loosening the liveness probe.
 */
@Startup
@Singleton
public class DeploymentsStarted implements HealthCheck {

    private final DeploymentRegistry deployments;

    DeploymentsStarted(DeploymentRegistry deployments) {
        this.deployments = deployments;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("deployments-started").status(deployments.allStarted()).build();
    }
}
