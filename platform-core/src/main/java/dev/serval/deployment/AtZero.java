package dev.serval.deployment;

import dev.serval.error.NotReady;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.TokenEstimate;
import dev.serval.request.TensorIO;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * A deployment while no replica serves it (scaled to zero, starting, or loaded on demand), and what brings it back:
 * whether its requests wait in the router's queue meanwhile (the router's mode, set at every publication), how such a
 * request's tensors are mapped (by the last model that served, whose signature, batching and mapping outlive the
 * replicas, or else by the kind's input side), and the wake-up of a deployment at zero for a request that cannot wait
 * (its kind unknown: nothing maps its tensors until a model loaded).
 *
 * <p>Threads: {@link #lastServed} and the router's mode are written by the controller thread ({@link #published}, or
 * the deployment's constructor) and read by request threads (volatile); {@link #waking} is set by a request thread
 * ({@link #mapping}) and cleared by the controller thread once a replica is wanted, so that a burst of such requests
 * asks the controller for one replica, once.
 */
final class AtZero<I, O> {

    /** The expected start of a replica before one was measured: the Retry-After of a full queue at zero. */
    private static final long UNMEASURED_START_NANOS = 5_000_000_000L;

    private final String name;
    private final Router<I, O> router;
    private final PooledReplicaLauncher<I, O> launcher;
    private final Supplier<DeploymentStatus> status;
    /** Asks the controller for a number of replicas (the autoscaler's way, {@code DeploymentScaling.scale}). */
    private final IntConsumer scale;
    /** The kind's mapping of a request's tensors before any model loaded; null when unknown. */
    private final TensorIO<I, O> beforeLoad;
    /** Requests queue while no replica serves whatever the spec says (a deployment loaded on demand). */
    private final boolean onDemand;
    private volatile Served lastServed;
    /** A wake-up is on its way to the controller: set by request threads, cleared by the controller thread. */
    private final AtomicBoolean waking = new AtomicBoolean();

    /**
     * What a version that served showed callers; {@code io} is null for a model that maps no tensors;
     * {@code maxInputTokens} prices the requests that wait for the next replica ({@link #admissionCost}).
     */
    record Served(ModelSignature signature, BatchingDecision batching, TensorIO<?, ?> io, long maxInputTokens) {
    }

    AtZero(String name, Router<I, O> router, PooledReplicaLauncher<I, O> launcher, Supplier<DeploymentStatus> status,
            IntConsumer scale, TensorIO<I, O> beforeLoad, boolean onDemand) {
        this.name = name;
        this.router = router;
        this.launcher = launcher;
        this.status = status;
        this.scale = scale;
        this.beforeLoad = beforeLoad;
        this.onDemand = onDemand;
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
            lastServed = new Served(model.signature(), model.batching(), tensorIo(model), model.maxInputTokens());
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

    /** Whether requests wait in the queue while the deployment has no replica at all (loaded on demand). */
    boolean onDemand() {
        return onDemand;
    }

    /** What the newest version that served showed callers, or null before one did. */
    Served lastServed() {
        return lastServed;
    }

    /**
     * Any thread: the tokens admission counts {@code inputs} at while no replica serves, as the last version that
     * served estimated them ({@link Model#admissionCost}: {@link TokenEstimate} at its {@code maxInputTokens}); before
     * any served, when how much of a text the model reads is not known yet, each text at its code points + 2,
     * uncapped (inputs that are not text, a tensor or composite kind's, count 0).
     */
    long admissionCost(List<?> inputs) {
        Served served = lastServed;
        return TokenEstimate.of(inputs, served == null ? Long.MAX_VALUE : served.maxInputTokens());
    }

    /**
     * Any thread: how the tensors of a request taken while no replica serves are mapped to the model's inputs: as the
     * last model that served mapped them, or before any did, as the kind maps them (outputs are mapped by the model
     * that answers).
     *
     * @throws NotReady when neither is known (at zero and never loaded, created with {@code initial_replicas} 0, kind
     *                  unknown), after asking for one replica, at most once until the controller applied it
     */
    @SuppressWarnings("unchecked")
    TensorIO<I, O> mapping() {
        Served served = lastServed;
        TensorIO<I, O> io = served != null && served.io() != null ? (TensorIO<I, O>) served.io() : beforeLoad;
        if (io == null) {
            if (status.get().desired() == 0 && waking.compareAndSet(false, true)) {
                scale.accept(1);
            }
            throw new NotReady("model '" + name + "' is starting its first replica (it was created with none); "
                    + "retry once it is ready");
        }
        return io;
    }
}
