package dev.serval.deployment;

import dev.serval.autoscaling.ScalingTarget;
import dev.serval.cache.DeploymentCache;
import dev.serval.controller.Controller;
import dev.serval.controller.ControllerLoop;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.health.FailureMonitor;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.replica.Replica;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.TensorIO;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.DeploymentStatus;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * One served model, as the HTTP edge sees it: send it requests (tensors, texts to embed, or the model's own inputs),
 * read its condition, change its spec, close it.
 *
 * <p>Design. Requests go straight to the deployment's {@link Router} (lock-free); everything else is handed to the
 * controller thread. {@link #status} is replaced by the controller whenever the replicas change ({@link #publish},
 * controller thread only) and read here without locks; {@link #spec} is written by {@link #update} callers and read by
 * request threads (volatile); {@link #closed} and {@link #everRouted} only go from false to true.
 *
 * <p>Sub-machines, each in its own type: the way of a request in and of its answer out ({@link Intake}: which model
 * judges a request, and the deadline it carries to the router); the deployment while no replica serves it
 * ({@link AtZero}: whether requests wait, how they are mapped, the wake-up); whether it serves, as a future
 * ({@link ServingSignal}); the autoscaler's view of it ({@link DeploymentScaling}); its result cache
 * ({@code cache.DeploymentCache}, looked up per input by {@link CachedRequest}). Metadata ({@link #signature()},
 * {@link #batching()}) describes the newest version that serves, or the last one that did.
 */
public final class Deployment<I, O> implements AutoCloseable {

    private final PooledReplicaLauncher<I, O> launcher;
    private final DeploymentMetrics metrics;
    private final FailureMonitor.Window failures;
    private final DeploymentGauges gauges;
    private final RecentErrors recentErrors;
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
    private final DeploymentScaling<I, O> scaling;
    private final AtZero<I, O> atZero;
    private final Intake<I, O> intake;
    private final ServingSignal serving = new ServingSignal();

    Deployment(DeploymentSpec spec, ModelLoader<I, O> loader, ServingEngine.Threads threads, ControllerLoop loop,
            Controller controller, LongSupplier nanoTime, InstantSource wallClock, DeploymentMetrics metrics,
            FailureMonitor.Window failures, Consumer<Deployment<?, ?>> onClosed, TensorIO<I, O> beforeLoad,
            boolean onDemand, DeploymentCache<O> cache) {
        this.spec = spec;
        this.failures = failures;
        this.metrics = metrics;
        this.launcher = new PooledReplicaLauncher<>(loader, threads.launchers(), threads.health(), nanoTime, metrics);
        this.loop = loop;
        this.controller = controller;
        this.onClosed = onClosed;
        this.router = new Router<>(spec.name(), spec.admission().maxQueuedRequests(),
                spec.admission().maxPendingTokens(), nanoTime, metrics);
        this.status = DeploymentStatus.initial(spec.name(), spec.version(), spec.numReplicas(), spec.isAutoscaled());
        this.recentErrors = new RecentErrors(wallClock);
        this.gauges = new DeploymentGauges(metrics, router, this::status);
        this.scaling = new DeploymentScaling<>(this, router, loop, controller, metrics, this::status);
        this.atZero = new AtZero<>(spec.name(), router, launcher, this::status, scaling::scale, beforeLoad, onDemand);
        this.intake = new Intake<>(this, router, atZero, cache);
        atZero.published(spec);
    }

    /** Controller thread: takes over the controller's latest view of the replicas. */
    private void publish(DeploymentStatus next) {
        if (next.routable() > 0) {
            everRouted = true;
        }
        recentErrors.record(status, next);
        status = next;
        atZero.published(spec);
        // Nothing serves and nothing is starting (scaled to zero by num_replicas, or backing off after failed starts):
        // requests would wait for nothing, so the router refuses them, queued ones included, with the reason.
        String reason = NotServing.reason(next, atZero.onDemand());
        if (reason != null) {
            router.refuse(reason);
        } else {
            router.accept();
        }
        if (!closed) { // once closed, close() leaves the signal failed for good
            serving.published(next, reason);
        }
    }

    /**
     * Completes when a replica serves (at once while one does), or exceptionally with {@link NotReady} when starts
     * fail or the deployment closes first: lets a caller wait for a deployment loaded on demand. Read once per call.
     */
    public CompletableFuture<Void> serving() {
        return serving.current();
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
                        "the controller refused the deployment: " + e.getMessage(), initial.isAutoscaled()));
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

    /** Whether the deployment serves now, and if not, why. */
    public DeploymentState state() {
        return state(router.snapshot());
    }

    /** Whether the deployment serves, judged by {@code snapshot} (the one its caller read). */
    DeploymentState state(RoutingSnapshot<I, O> snapshot) {
        return DeploymentState.of(closed, snapshot.size(), status, atZero.onDemand());
    }

    /** The deployment's most recent replica failure (a failed start or failed health checks), if any. */
    public Optional<String> failure() {
        return Optional.ofNullable(status.lastError());
    }

    /** The last few replica failures (failed starts, failed health checks, failure-monitor replacements), oldest first. */
    public List<RecentError> recentErrors() {
        return recentErrors.list();
    }

    /** Replicas routable now (RUNNING or UPDATING and warmed up). */
    public int routableReplicas() {
        return router.routableReplicas();
    }

    /** The replicas routable now, one snapshot's immutable list (benchmarks, diagnostics that drive a replica). */
    public List<RoutableReplica<I, O>> replicas() {
        return router.snapshot().replicas();
    }

    /** Requests the replicas work on now. */
    public int inFlight() {
        return router.snapshot().inFlight();
    }

    /** Requests running on the replicas and waiting in the queue now: the autoscaler's signal. Allocates nothing. */
    public int ongoingRequests() {
        return router.queuedRequests() + router.snapshot().inFlight();
    }

    /** The autoscaler's latest view (load, wanted replicas, last change and why); empty while not autoscaled. */
    public Optional<DeploymentStatus.Autoscaling> autoscaling() {
        return spec.isAutoscaled() ? Optional.ofNullable(scaling.latest()) : Optional.empty();
    }

    /** This deployment as the engine's autoscaler drives it. */
    ScalingTarget scalingTarget() {
        return scaling;
    }

    /** Requests waiting because every replica is at {@code max_ongoing_requests}. */
    public int queuedRequests() {
        return router.queuedRequests();
    }

    /** What the model of the newest serving version takes and returns; empty while no replica serves. */
    public Optional<ModelSignature> signature() {
        RoutableReplica<I, O> newest = router.snapshot().newest();
        return newest != null ? Optional.of(newest.model().signature())
                : Optional.ofNullable(atZero.lastServed()).map(AtZero.Served::signature);
    }

    /** What {@code read} reads of the newest serving version's model (labels, tokenizer); empty while none serves. */
    public <T> Optional<T> newestModel(Function<Model<I, O>, T> read) {
        RoutableReplica<I, O> newest = router.snapshot().newest();
        return newest == null ? Optional.empty() : Optional.ofNullable(read.apply(newest.model()));
    }

    /** What the model takes and returns while every serving replica runs one model (none serving: empty). */
    Optional<ModelSignature> uniformSignature() {
        return Optional.ofNullable(Intake.uniformSignature(router.snapshot()));
    }

    /** How the newest serving version runs its inputs (single or batched, invariant or not, and why). */
    public Optional<BatchingDecision> batching() {
        RoutableReplica<I, O> newest = router.snapshot().newest();
        return newest != null ? Optional.of(newest.model().batching())
                : Optional.ofNullable(atZero.lastServed()).map(AtZero.Served::batching);
    }

    /** The result cache now (whether it is active, its bound, its size). */
    public DeploymentStatus.Cache cache() {
        return intake.cache().status();
    }

    /** The failure monitor's view of this deployment. */
    public FailureMonitor.Window failures() {
        return failures;
    }

    /** Whether a replica of this deployment has ever been routable. */
    public boolean hasServed() {
        return everRouted;
    }

    /** Reached the state asked for (startup probes): a replica was routable, or none is wanted; two volatile reads. */
    public boolean started() {
        return everRouted || status.desired() == 0;
    }

    DeploymentMetrics metrics() {
        return metrics;
    }

    /** This deployment's phase histograms, to read (the dashboard); the engine records into them. */
    public PhaseMeters phaseMeters() {
        return PhaseMeters.of(metrics);
    }

    /** The router (tests of this package). */
    Router<I, O> router() {
        return router;
    }

    /**
     * Tells the failure monitor how a request ended: {@code serverFailure} when the server failed it. Refusals and
     * bad input are not recorded: they say nothing about the replicas' health. Nor are failures of a model whose
     * request failures do not judge its replicas ({@link Model#requestFailuresMarkUnhealthy}: pipelines and Java
     * handlers, whose failures are their input's): replacing replicas or restarting the node cannot mend them, and a
     * client could otherwise restart the pod with bad input. Reads the routing snapshot once, on failures only.
     */
    public void recordOutcome(boolean serverFailure) {
        intake.recordOutcome(serverFailure, failures);
    }

    /**
     * Throws what a request would be refused with now, before its inputs are known: lets the edge refuse on a
     * request's headers, without reading or decoding its body. Best-effort (room may appear a moment later); reads
     * three fields and allocates only the refusal.
     *
     * @throws NotReady                    when no replica can serve
     * @throws dev.serval.error.Overloaded when the deployment's queue is full
     */
    public void checkAccepting() {
        intake.checkAccepting();
    }

    /**
     * Runs one tensor request: maps its tensors to the model's inputs (its kind decides how), routes them as
     * {@link #submit} does, and maps the outputs back with the model of the replica that answered. The request's
     * {@link CallContext} goes with it: a model that calls other deployments passes it on to them
     * ({@code compose.Handle}), and a request whose deadline passes while it waits (in the deployment's queue or a
     * replica's) is dropped before it reaches the model. A text model's texts go through its result cache, if on.
     *
     * @return as {@link #submit}'s, but completed with every output tensor and the version that answered, or
     *     exceptionally with {@link DeadlineExceeded} when its deadline passed before a predictor took it
     * @throws InvalidInput when a tensor does not fit the model or a requested output is unknown (checked before
     *                      routing while one model serves; otherwise the caller checks the answer with
     *                      {@link Inference#select}), or as {@link #submit}
     * @throws NotReady     as {@link #submit}
     */
    public CompletableFuture<Inference> infer(InferenceRequest request) {
        return intake.infer(request);
    }

    /**
     * Embeds {@code texts} as {@link #infer} does (through the result cache, per text), for a deployment of a
     * text-embedding model (inputs texts, outputs {@link Embedding}s: the caller checks the kind).
     *
     * @param dimensions the dimension the caller expects, or 0 for the model's own: another is refused before routing
     *                   while one model serves, otherwise on the answer
     * @param context    the request's id and deadline: as {@link #infer}'s, dropped unrun once its deadline passed
     * @throws InvalidInput when {@code dimensions} is not the model's, or as {@link #submit}
     */
    public CompletableFuture<List<Embedding>> embed(List<String> texts, int dimensions, CallContext context) {
        return intake.embed(texts, dimensions, context);
    }

    /**
     * {@link #embed} for TEI's {@code /embed_all}, past the result cache (which holds pooled results): each answer
     * carries its {@link Embedding#tokenVectors}, or the future fails with {@link InvalidInput} naming a text that has
     * none (read in windows under {@code long_inputs: chunk}).
     */
    public CompletableFuture<List<Embedding>> embedTokens(List<String> texts, CallContext context) {
        return intake.embedTokens(texts, context);
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
        return intake.route(router.snapshot(), inputs, CallContext.NO_DEADLINE);
    }

    // --- changes ---------------------------------------------------------------------------------------------------

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
        intake.cache().configure(next.cache()); // in place: a cache never rolls the replicas
        return loop.submit(() -> {
            controller.apply(next, launcher, router, statusSink);
            atZero.published(next);
        });
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
            Duration wait = spec.rollout().gracefulShutdownTimeout().plus(Replica.exitGrace(spec)).plusSeconds(30);
            if (!removed.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                System.getLogger(Deployment.class.getName()).log(System.Logger.Level.WARNING,
                        "deployment ''{0}'' did not stop within {1}", spec.name(), wait);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        gauges.remove();
        intake.cache().close();
        metrics.removeAll(); // before onClosed frees the name: a namesake's meters are never the ones removed
        serving.closed(new NotReady("model '" + spec.name() + "' was unloaded"));
        onClosed.accept(this);
    }
}
