package dev.serval.deployment;

import dev.serval.controller.Controller;
import dev.serval.controller.ControllerLoop;
import dev.serval.controller.DeploymentStatus;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.health.FailureMonitor;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.predictor.Model;
import dev.serval.predictor.ModelSignature;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One served model, as the HTTP edge sees it: submit requests, read state, change the spec, close.
 *
 * <p>Design. Requests go straight to the deployment's {@link Router} (lock-free); everything else is handed to the
 * controller thread. {@link #status} is replaced by the controller whenever the replicas change and read here
 * without locks; {@link #spec} is written by {@link #update} callers and read by request threads (volatile).
 *
 * <p>Which model judges a request: the one of the replica that runs it. Each routable replica carries its loaded
 * model in the routing snapshot; the replica validates a request's inputs when the request reaches it, and the
 * request's outputs are mapped with that model's {@code io()} ({@link #io(CompletableFuture)}). A model that loaded
 * but has not warmed up, or failed to, is in no snapshot and so judges nothing; during a rolling update, while both
 * versions serve, a request is judged by whichever version took it. Metadata ({@link #signature()},
 * {@link #batching()}) describes the newest version that serves. All of it is read from the one snapshot a call
 * reads: no lock, no allocation.
 */
public final class Deployment<I, O> implements AutoCloseable {

    /** Where a deployment is, as callers see it. Only READY serves. */
    public enum State {
        /** No routable replica yet; replicas are starting. */
        LOADING,
        /** At least one replica is RUNNING (or UPDATING) and takes requests. */
        READY,
        /** No routable replica, none starting, and the last start failed; retried with back-off. */
        FAILED,
        /** Closed or being closed. */
        STOPPED
    }

    private final PooledReplicaLauncher<I, O> launcher;
    private final DeploymentMetrics metrics;
    private final FailureMonitor.Window failures;
    private final List<io.micrometer.core.instrument.Meter> gauges;
    private final ControllerLoop loop;
    private final Controller controller;
    private final Router<I, O> router;
    private final Consumer<Deployment<?, ?>> onClosed;
    private final CountDownLatch removed = new CountDownLatch(1);
    private final Consumer<DeploymentStatus> statusSink = this::publish;
    private volatile DeploymentSpec spec;
    private volatile DeploymentStatus status;
    private volatile boolean closed;
    private volatile boolean everRouted;
    private final InstantSource wallClock;
    private final ArrayDeque<RecentError> recentErrors = new ArrayDeque<>();

    /** A replica failure as the status view shows it. */
    public record RecentError(Instant at, String message) {
    }

    private static final int RECENT_ERRORS = 10;

    Deployment(DeploymentSpec spec, ModelLoader<I, O> loader, ServingEngine.Threads threads, ControllerLoop loop,
            Controller controller, LongSupplier nanoTime, InstantSource wallClock, DeploymentMetrics metrics,
            FailureMonitor.Window failures, Consumer<Deployment<?, ?>> onClosed) {
        this.spec = spec;
        this.wallClock = wallClock;
        this.failures = failures;
        this.metrics = metrics;
        this.launcher = new PooledReplicaLauncher<>(loader, threads.launchers(), threads.health(), nanoTime, metrics);
        this.loop = loop;
        this.controller = controller;
        this.onClosed = onClosed;
        this.router = new Router<>(spec.name(), spec.admission().maxQueuedRequests(), nanoTime, metrics);
        this.status = new DeploymentStatus(spec.name(), spec.version(), spec.numReplicas(), 0, 0, 0, 0, 0, 0, null);
        this.gauges = List.of(
                metrics.gauge("serval.queued.requests", "Requests waiting because every replica is full", router,
                        Router::queuedRequests),
                metrics.gauge("serval.replicas", "Replicas by state", this, d -> d.status.starting(), "state", "starting"),
                metrics.gauge("serval.replicas", "Replicas by state", this, d -> d.status.running(), "state", "running"),
                metrics.gauge("serval.replicas", "Replicas by state", this, d -> d.status.updating(), "state", "updating"),
                metrics.gauge("serval.replicas", "Replicas by state", this, d -> d.status.stopping(), "state", "stopping"),
                metrics.gauge("serval.replicas", "Replicas by state", this, d -> d.status.recovering(), "state",
                        "recovering"));
    }

    private void publish(DeploymentStatus next) {
        if (next.routable() > 0) {
            everRouted = true;
        }
        String error = next.lastError();
        if (error != null && (!error.equals(status.lastError()) || next.failedStarts() > status.failedStarts())) {
            synchronized (recentErrors) {
                if (recentErrors.size() == RECENT_ERRORS) {
                    recentErrors.removeFirst();
                }
                recentErrors.addLast(new RecentError(wallClock.instant(), error));
            }
        }
        status = next;
        // Nothing serves and nothing is starting (scaled to zero, or backing off after failed starts): requests would
        // wait for nothing, so the router refuses them, queued ones included, with the reason.
        String reason = unservable(next);
        if (reason != null) {
            router.refuse(reason);
        } else {
            router.accept();
        }
    }

    /** Why nothing can serve with {@code status}, or null while a replica serves or one is starting. */
    private static String unservable(DeploymentStatus status) {
        if (status.routable() > 0 || status.starting() > 0) {
            return null;
        }
        if (status.desired() == 0) {
            return scaledToZero(status.name());
        }
        return status.failedStarts() > 0 ? "model '" + status.name() + "' failed to load: " + status.lastError() : null;
    }

    private static String scaledToZero(String name) {
        return "model '" + name + "' has num_replicas 0: no replica serves it";
    }

    /** The last few replica failures (failed starts, failed health checks, failure-monitor replacements), oldest first. */
    public List<RecentError> recentErrors() {
        synchronized (recentErrors) {
            return List.copyOf(recentErrors);
        }
    }

    /** Requests the replicas work on now. */
    public int inFlight() {
        int total = 0;
        for (var replica : router.snapshot().replicas()) {
            total += replica.inFlight();
        }
        return total;
    }

    /**
     * Hands the deployment to the controller. Should the controller refuse it, the refusal becomes the deployment's
     * failure (state FAILED, with the reason), so that it never sits in LOADING waiting for replicas nobody starts.
     */
    void start() {
        DeploymentSpec initial = spec;
        loop.execute(() -> {
            try {
                controller.apply(initial, launcher, router, statusSink);
            } catch (RuntimeException e) {
                publish(new DeploymentStatus(initial.name(), initial.version(), initial.numReplicas(), 0, 0, 0, 0, 0, 1,
                        "the controller refused the deployment: " + e.getMessage()));
                throw e; // the loop logs it
            }
        });
    }

    public String name() {
        return spec.name();
    }

    public DeploymentSpec spec() {
        return spec;
    }

    /** The replicas per state, as the controller last published them. */
    public DeploymentStatus status() {
        return status;
    }

    public State state() {
        if (closed) {
            return State.STOPPED;
        }
        if (router.routableReplicas() > 0) {
            return State.READY;
        }
        DeploymentStatus now = status;
        return now.failedStarts() > 0 && now.starting() == 0 ? State.FAILED : State.LOADING;
    }

    /** The deployment's most recent replica failure (a failed start or failed health checks), if any. */
    public Optional<String> failure() {
        return Optional.ofNullable(status.lastError());
    }

    /** The model of the newest version that serves (has a routable replica); null when none serves. */
    private Model<I, O> servingModel() {
        RoutableReplica<I, O> newest = router.snapshot().newest();
        return newest == null ? null : newest.model();
    }

    /** What the model of the newest serving version takes and returns; empty while no replica serves. */
    public Optional<ModelSignature> signature() {
        Model<I, O> model = servingModel();
        return model == null ? Optional.empty() : Optional.of(model.signature());
    }

    /**
     * What the model takes and returns when every serving replica runs the same model; empty while none serves, or
     * while a rolling update has two versions serving. A check of a request against the signature (its requested
     * outputs, say) made before the request is routed is only sound then; otherwise it is made on the answer, against
     * the model that gave it.
     */
    public Optional<ModelSignature> uniformSignature() {
        RoutingSnapshot<I, O> snapshot = router.snapshot();
        RoutableReplica<I, O> newest = snapshot.newest();
        return newest == null || !snapshot.servesOneModel() ? Optional.empty()
                : Optional.of(newest.model().signature());
    }

    /**
     * How request tensors map to the model's inputs, for the newest serving version. The input side depends only on
     * the model's kind, which a deployment never changes; map outputs with {@link #io(CompletableFuture)}.
     *
     * @throws NotReady when no replica serves
     */
    public dev.serval.tensor.TensorIO<I, O> io() {
        Model<I, O> model = servingModel();
        if (model == null) {
            throw notReady(state());
        }
        return model.io();
    }

    /**
     * How the outputs of {@code result} (a future {@link #submit} returned, completed normally) map back to tensors:
     * with the model of the replica that answered, whose outputs they are (its labels, its output names).
     */
    public dev.serval.tensor.TensorIO<I, O> io(CompletableFuture<List<O>> result) {
        RoutableReplica<I, O> answered = Router.servedBy(result);
        return answered == null ? io() : answered.model().io();
    }

    /** How the newest serving version runs its inputs (single or batched, invariant or not, and why). */
    public Optional<dev.serval.predictor.Batching> batching() {
        Model<I, O> model = servingModel();
        return model == null ? Optional.empty() : Optional.of(model.batching());
    }

    /** Requests waiting because every replica is at {@code max_ongoing_requests}. */
    public int queuedRequests() {
        return router.queuedRequests();
    }

    /**
     * Tells the failure monitor how a request ended: {@code serverFailure} when the server failed it. Refusals and
     * bad input are not recorded: they say nothing about the replicas' health.
     */
    public void recordOutcome(boolean serverFailure) {
        failures.record(serverFailure);
    }

    DeploymentMetrics metrics() {
        return metrics;
    }

    /** The failure monitor's view of this deployment. */
    public FailureMonitor.Window failures() {
        return failures;
    }

    /** Whether a replica of this deployment has ever been routable (startup probes). */
    public boolean hasServed() {
        return everRouted;
    }

    /** The router (status, tests). */
    public Router<I, O> router() {
        return router;
    }

    /**
     * Throws what {@link #submit} would refuse any request with now, before its inputs are known: lets the edge refuse
     * on a request's headers, without reading or decoding its body. Best-effort (room may appear a moment later);
     * reads three fields and allocates only the refusal.
     *
     * @throws NotReady                    when no replica can serve
     * @throws dev.serval.error.Overloaded when the deployment's queue is full
     */
    public void checkAccepting() {
        State state = state();
        if (state != State.READY) {
            throw notReady(state);
        }
        router.refuseIfFull();
    }

    /**
     * Checks the request's size and routes it to a replica, which validates the inputs against its own model, or
     * queues it while every replica is full. Never blocks.
     *
     * @return completed (on a predictor thread) with one output per input, in order; completed with
     *     {@link InvalidInput} when the request waited in the queue and the replica that took it refused an input
     * @throws InvalidInput when the request is empty, too large, or the replica it was routed to at once refused an
     *                      input
     * @throws NotReady     when no replica can serve (loading, failed, closing)
     * @throws dev.serval.error.Overloaded when every chosen replica and the deployment's queue are full
     */
    public CompletableFuture<List<O>> submit(List<I> inputs) {
        State state = state();
        if (state != State.READY) {
            throw notReady(state);
        }
        DeploymentSpec current = spec;
        if (inputs.isEmpty()) {
            throw new InvalidInput("the request holds no inputs");
        }
        if (inputs.size() > current.admission().maxInputsPerRequest()) {
            throw new InvalidInput("the request holds " + inputs.size() + " inputs; model '" + current.name()
                    + "' takes at most " + current.admission().maxInputsPerRequest() + " per request");
        }
        CompletableFuture<List<O>> result = router.submit(inputs);
        if (result.state() == java.util.concurrent.Future.State.FAILED && Router.servedBy(result) == null
                && result.exceptionNow() instanceof InvalidInput refused) {
            // Refused by the validation of the replica it was routed to, before it ran (a replica records itself as
            // the one serving only once its run began): as synchronous as a size check.
            throw refused;
        }
        return result;
    }

    private NotReady notReady(State state) {
        String name = spec.name();
        if (state == State.LOADING && status.desired() == 0) {
            return new NotReady(scaledToZero(name));
        }
        return switch (state) {
            case LOADING -> everRouted
                    ? new NotReady("model '" + name + "' has no running replica; " + status.starting() + " starting")
                    : new NotReady("model '" + name + "' is still loading");
            case FAILED -> new NotReady("model '" + name + "' failed to load: " + status.lastError());
            case STOPPED -> new NotReady("model '" + name + "' is shutting down");
            case READY -> new NotReady("model '" + name + "' has no running replica");
        };
    }

    /**
     * Changes the desired state (replica count, admission limits, version...). The name must stay the same. A
     * change of model, version, threads or admission limits replaces the replicas without dropping requests: new
     * ones start, old ones serve until the new ones run, then drain.
     *
     * @return completed once the controller has applied the change (on its own thread, right after this call):
     *     from then on, settings that change in place (batch size and wait) hold for every running replica, and
     *     replacements have begun; completed exceptionally if the controller refused it, or with
     *     {@link java.util.concurrent.RejectedExecutionException} if the engine closed first
     */
    public CompletableFuture<Void> update(DeploymentSpec next) {
        if (!next.name().equals(spec.name())) {
            throw new IllegalArgumentException("cannot rename deployment '" + spec.name() + "' to '" + next.name() + "'");
        }
        if (closed) {
            throw new IllegalStateException("deployment '" + next.name() + "' is closed");
        }
        spec = next;
        return loop.submit(() -> controller.apply(next, launcher, router, statusSink));
    }

    /**
     * Stops every replica (each drains its admitted requests for up to the graceful-shutdown timeout), fails what is
     * still queued, and waits for all of it. Idempotent.
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            String name = spec.name();
            loop.submit(() -> controller.remove(name, removed::countDown)).whenComplete((ignored, failure) -> {
                if (failure != null) { // the engine's controller stopped first: nothing else will close the router
                    router.close();
                    removed.countDown();
                }
            });
        }
        try {
            // A replica drains for the graceful timeout, then its threads get the exit grace to leave the model.
            Duration wait = spec.rollout().gracefulShutdownTimeout().plus(dev.serval.replica.Replica.exitGrace(spec)).plusSeconds(30);
            if (!removed.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                System.getLogger(Deployment.class.getName()).log(System.Logger.Level.WARNING,
                        "deployment ''{0}'' did not stop within {1}", spec.name(), wait);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        gauges.forEach(metrics::remove);
        onClosed.accept(this);
    }
}
