package dev.serval.deployment;

import dev.serval.metrics.DeploymentMetrics;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentStatus;
import io.micrometer.core.instrument.Meter;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * The gauges of one deployment: {@code serval.queued.requests}, {@code serval.pending.tokens} and
 * {@code serval.replicas{state}}, registered once when the deployment is created and removed when it closes. The
 * registry samples them on its own thread; each sample reads one volatile field (the router's queue or token count,
 * the published status), never locks.
 */
final class DeploymentGauges {

    private final DeploymentMetrics metrics;
    private final List<Meter> gauges;

    /** @param status the deployment's latest published status, read at each sample */
    DeploymentGauges(DeploymentMetrics metrics, Router<?, ?> router, Supplier<DeploymentStatus> status) {
        this.metrics = metrics;
        this.gauges = List.of(
                metrics.gauge("serval.queued.requests", "Requests waiting because every replica is full", router,
                        Router::queuedRequests),
                metrics.gauge("serval.pending.tokens", "Estimated tokens of the requests admitted and not answered, "
                        + "queued or running (at most max_pending_tokens)", router, r -> r.pendingTokens().count()),
                metrics.gauge("serval.ongoing.requests", "Requests running on replicas or queued: the autoscaling "
                        + "signal", router, r -> r.queuedRequests() + r.snapshot().inFlight()),
                metrics.gauge("serval.autoscaling.desired.replicas", "Replicas the deployment runs: num_replicas, or "
                        + "the autoscaler's count", status, s -> s.get().desired()),
                replicas(status, "starting", DeploymentStatus::starting),
                replicas(status, "running", DeploymentStatus::running),
                replicas(status, "updating", DeploymentStatus::updating),
                replicas(status, "stopping", DeploymentStatus::stopping),
                replicas(status, "recovering", DeploymentStatus::recovering));
    }

    private Meter replicas(Supplier<DeploymentStatus> status, String state, ToIntFunction<DeploymentStatus> count) {
        return metrics.gauge("serval.replicas", "Replicas by state", status, s -> count.applyAsInt(s.get()), "state",
                state);
    }

    /** Unregisters every gauge. */
    void remove() {
        gauges.forEach(metrics::remove);
    }
}
