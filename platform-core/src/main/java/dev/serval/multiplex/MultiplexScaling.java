package dev.serval.multiplex;

import dev.serval.autoscaling.ScalingTarget;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.util.Optional;

/**
 * A multiplexed deployment as the engine's autoscaler drives it (it acts only while the config is autoscaled): its
 * load is the sum over its models of their requests running and waiting, and its replica count bounds how many models
 * it holds and how far a hot one spreads ({@link Multiplexer#configure}).
 *
 * <p>Threads: {@link #spec} is written by whoever changes the deployment's config (one change at a time) and read by
 * the autoscaler thread; {@link #status} is written by the autoscaler thread and read by any thread. Both are volatile
 * references to immutable values.
 */
public final class MultiplexScaling implements ScalingTarget {

    private final Multiplexer<?> multiplexer;
    private volatile DeploymentSpec spec;
    /** The autoscaler's latest view, or null (before its first decision). */
    private volatile DeploymentStatus.Autoscaling status;

    public MultiplexScaling(Multiplexer<?> multiplexer, DeploymentSpec spec) {
        this.multiplexer = multiplexer;
        this.spec = spec;
    }

    /**
     * Takes a changed config and says the replica count it leaves: an autoscaled deployment keeps the autoscaler's
     * count (clamped to its new bounds); one that was not, or no longer is, autoscaled takes its own.
     */
    public int replicasAfter(DeploymentSpec next) {
        DeploymentSpec before = spec;
        spec = next;
        return next.isAutoscaled() && before.isAutoscaled() ? next.autoscaling().clamp(multiplexer.replicas())
                : next.numReplicas();
    }

    /** The autoscaler's latest view; empty while not autoscaled or before its first decision. */
    public Optional<DeploymentStatus.Autoscaling> status() {
        return spec.isAutoscaled() ? Optional.ofNullable(status) : Optional.empty();
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public DeploymentSpec spec() {
        return spec;
    }

    @Override
    public int ongoingRequests() {
        int ongoing = multiplexer.ongoingRequests();
        return multiplexer.takeArrived() ? Math.max(1, ongoing) : ongoing;
    }

    @Override
    public int desiredReplicas() {
        return multiplexer.replicas();
    }

    @Override
    public void scale(int replicas) {
        multiplexer.configure(replicas, spec.multiplex());
    }

    @Override
    public void autoscaled(DeploymentStatus.Autoscaling latest, boolean changed, boolean budgetRefused) {
        status = latest;
    }
}
