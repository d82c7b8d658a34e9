package dev.serval.deployment;

import dev.serval.autoscaling.AutoscalingStatus;
import dev.serval.autoscaling.ScalingTarget;
import dev.serval.controller.Controller;
import dev.serval.controller.ControllerLoop;
import dev.serval.controller.DeploymentStatus;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.request.TensorIO;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * One deployment as the engine's autoscaler drives it, and what lets it go to zero replicas and back: the
 * {@link ScalingTarget} whose decisions go to the controller thread (applied like any spec change), the autoscaler's
 * latest view for the API and meters, what the newest serving version showed callers (metadata and tensor mapping
 * outlive the replicas at zero), and the router's mode of queueing requests while no replica serves.
 *
 * <p>Threads: {@link #autoscaling} is written by the autoscaler thread; {@link #lastServed} and the router's mode by
 * the controller thread ({@link #published}); any thread reads them (volatile).
 */
final class DeploymentScaling<I, O> implements ScalingTarget {

    /** The expected start of a replica before one was measured: the Retry-After of a full queue at zero. */
    private static final long UNMEASURED_START_NANOS = 5_000_000_000L;

    private final Deployment<I, O> deployment;
    private final Router<I, O> router;
    private final PooledReplicaLauncher<I, O> launcher;
    private final ControllerLoop loop;
    private final Controller controller;
    private final DeploymentMetrics metrics;
    private final Supplier<DeploymentStatus> status;
    private volatile AutoscalingStatus autoscaling;
    private volatile Served lastServed;
    /** A {@link #wake()} is on its way to the controller: set by request threads, cleared by the controller thread. */
    private final AtomicBoolean waking = new AtomicBoolean();
    /** Requests queue while no replica serves whatever the spec says (a deployment loaded on demand). */
    private final boolean onDemand;

    /** What a version that served showed callers; {@code io} is null for a model that maps no tensors. */
    record Served(ModelSignature signature, BatchingDecision batching, TensorIO<?, ?> io) {
    }

    DeploymentScaling(Deployment<I, O> deployment, Router<I, O> router, PooledReplicaLauncher<I, O> launcher,
            ControllerLoop loop, Controller controller, DeploymentMetrics metrics, Supplier<DeploymentStatus> status,
            boolean onDemand) {
        this.deployment = deployment;
        this.onDemand = onDemand;
        this.router = router;
        this.launcher = launcher;
        this.loop = loop;
        this.controller = controller;
        this.metrics = metrics;
        this.status = status;
    }

    /**
     * Controller thread (or the deployment's constructor): takes note of what serves now, and sets the router's mode
     * for {@code current}: an autoscaled deployment that may go to zero queues requests while no replica serves (they
     * wait for the replica they make the autoscaler start, the measured start time being the Retry-After of a full
     * queue), and so does a deployment loaded on demand (a multiplexed model: its first requests wait for its load);
     * any other refuses them.
     */
    void published(DeploymentSpec current) {
        if (status.get().desired() > 0) {
            waking.set(false);
        }
        RoutableReplica<I, O> newest = router.snapshot().newest();
        if (newest != null) {
            Model<I, O> model = newest.model();
            lastServed = new Served(model.signature(), model.batching(), tensorIo(model));
        }
        if (onDemand || (current.isAutoscaled() && current.autoscaling().minReplicas() == 0)) {
            long measured = launcher.lastStartNanos();
            router.queueWhileEmpty(measured > 0 ? measured : UNMEASURED_START_NANOS);
        } else {
            router.refuseWhileEmpty();
        }
    }

    /** The model's tensor mapping, or null for a model that maps no tensors (its {@code io()} refuses). */
    private static TensorIO<?, ?> tensorIo(Model<?, ?> model) {
        try {
            return model.io();
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Any thread: starts one replica of a deployment at zero, at most once until the controller applied it: for a
     * request that cannot wait in the queue for the autoscaler to notice it (see {@code Deployment.infer}).
     */
    void wake() {
        if (status.get().desired() == 0 && waking.compareAndSet(false, true)) {
            scale(1);
        }
    }

    /** What the newest version that served showed callers, or null before one did. */
    Served lastServed() {
        return lastServed;
    }

    /** The autoscaler's latest view, or null before its first decision. */
    AutoscalingStatus latest() {
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
    public void autoscaled(AutoscalingStatus next, boolean changed, boolean budgetRefused) {
        autoscaling = next;
        if (changed) {
            metrics.autoscalingDecision(next.lastChange().to() > next.lastChange().from());
        }
        if (budgetRefused) {
            metrics.autoscalingBudgetRefusal();
        }
    }
}
