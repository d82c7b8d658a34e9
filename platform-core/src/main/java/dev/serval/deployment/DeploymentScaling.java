package dev.serval.deployment;

import dev.serval.autoscaling.ScalingTarget;
import dev.serval.controller.Controller;
import dev.serval.controller.ControllerLoop;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * One deployment as the engine's autoscaler drives it: the {@link ScalingTarget} whose decisions go to the controller
 * thread (applied like any spec change), whose load counts a request that arrived since the last sample
 * ({@link Router#takeArrived}), and the autoscaler's latest view for the API and meters. Going to zero replicas and
 * back is {@link AtZero}'s.
 *
 * <p>Threads: {@link #autoscaling} is written by the autoscaler thread and read by any thread (volatile).
 */
final class DeploymentScaling<I, O> implements ScalingTarget {

    private final Deployment<I, O> deployment;
    private final Router<I, O> router;
    private final ControllerLoop loop;
    private final Controller controller;
    private final DeploymentMetrics metrics;
    private final Supplier<DeploymentStatus> status;
    private volatile DeploymentStatus.Autoscaling autoscaling;

    DeploymentScaling(Deployment<I, O> deployment, Router<I, O> router, ControllerLoop loop, Controller controller,
            DeploymentMetrics metrics, Supplier<DeploymentStatus> status) {
        this.deployment = deployment;
        this.router = router;
        this.loop = loop;
        this.controller = controller;
        this.metrics = metrics;
        this.status = status;
    }

    /** The autoscaler's latest view, or null before its first decision. */
    DeploymentStatus.Autoscaling latest() {
        return autoscaling;
    }

    @Override
    public String name() {
        return deployment.name();
    }

    @Override
    public DeploymentSpec spec() {
        return deployment.spec();
    }

    @Override
    public int ongoingRequests() {
        int ongoing = deployment.ongoingRequests();
        return router.takeArrived() ? Math.max(1, ongoing) : ongoing;
    }

    @Override
    public int desiredReplicas() {
        return status.get().desired();
    }

    @Override
    public void scale(int replicas) {
        String name = name();
        try {
            loop.execute(() -> controller.scale(name, replicas));
        } catch (RejectedExecutionException e) {
            // the engine is closing: nothing is scaled any more
        }
    }

    @Override
    public void autoscaled(DeploymentStatus.Autoscaling next, boolean changed, boolean budgetRefused) {
        autoscaling = next;
        if (changed) {
            metrics.autoscalingDecision(next.lastChange().to() > next.lastChange().from());
        }
        if (budgetRefused) {
            metrics.autoscalingBudgetRefusal();
        }
    }
}
