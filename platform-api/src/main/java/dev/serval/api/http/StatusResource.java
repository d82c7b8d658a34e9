package dev.serval.api.http;

import dev.serval.api.serving.DeploymentRegistry;
import dev.serval.api.serving.ServedDeployment;
import dev.serval.deployment.Deployment;
import dev.serval.model.BatchingDecision;
import dev.serval.spec.DeploymentStatus;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * {@code GET /api/status}: what an operator wants at a glance, per deployment: version, state, replicas per state,
 * queued and in-flight requests, the failure monitor's ratio, and recent errors. Reads published snapshots only.
 */
@Path("/api/status")
@NonBlocking
@Tag(name = "Management")
@ManagementApi
public class StatusResource {

    private final DeploymentRegistry deployments;

    StatusResource(DeploymentRegistry deployments) {
        this.deployments = deployments;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    @Operation(summary = "Deployments, versions, replicas per state, queue depth and recent errors")
    public Map<String, Object> status() {
        List<Map<String, Object>> all = new ArrayList<>();
        for (ServedDeployment served : deployments.all()) {
            all.add(view(served));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("live", deployments.live());
        body.put("ready", deployments.allReady());
        if (!deployments.live()) {
            body.put("not_live_reason", deployments.notLiveReason());
        }
        body.put("deployments", all);
        return body;
    }

    /** One deployment's entry in {@code deployments}; the dashboard's too. */
    static Map<String, Object> view(ServedDeployment served) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("name", served.name());
        entry.put("model", served.config().model().name());
        if (served.multiplexed() != null) {
            entry.put("kind", "multiplexed");
            entry.put("state", "READY");
            entry.put("ready", true);
            entry.put("multiplex", ManagementResource.multiplex(served.multiplexed()));
            entry.put("ongoing_requests", served.multiplexed().deployment().ongoingRequests());
            return entry;
        }
        Deployment<?, ?> deployment = served.deployment();
        DeploymentStatus status = deployment.status();
        entry.put("kind", served.kind().id());
        entry.put("version", status.version());
        entry.put("state", deployment.state().name());
        entry.put("ready", served.ready());
        entry.put("replicas", ManagementResource.replicas(status));
        deployment.autoscaling().ifPresent(autoscaling -> entry.put("autoscaling",
                ManagementResource.autoscaling(autoscaling)));
        entry.put("queued_requests", deployment.queuedRequests());
        entry.put("in_flight_requests", deployment.inFlight());
        entry.put("failure_ratio", deployment.failures().lastRatio());
        deployment.batching().ifPresent(batching -> entry.put("batching", describe(batching)));
        entry.put("recent_errors", deployment.recentErrors().stream()
                .map(error -> Map.of("at", error.at().toString(), "message", error.message())).toList());
        return entry;
    }

    /** {@code {"mode": "single"|"batched", "batch_invariant": bool, "preferred_batch": int, "reason": "..."}}. */
    static Map<String, Object> describe(BatchingDecision batching) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("mode", batching.mode());
        described.put("batch_invariant", batching.batchInvariant());
        described.put("preferred_batch", batching.preferredBatch());
        described.put("reason", batching.reason());
        return described;
    }
}
