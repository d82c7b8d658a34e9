package dev.serval.replica;

import dev.serval.admission.BoundedCount;
import dev.serval.error.InferenceFailed;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.Model;
import dev.serval.routing.RoutableReplica;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.ServedModel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * One running replica: its own predictor threads (each owning a predictor made from the deployment's shared
 * model), an admission gate of {@code max_ongoing_requests} slots, and health tracking.
 *
 * <p>Design. {@link #slots} counts admitted requests; {@link #tryAcquire()} takes a slot by CAS and re-checks
 * {@link #accepting} afterwards, while {@link #stopAccepting()} clears the flag before anyone reads the count to
 * wait for idleness: of two threads racing there, at least one sees the other, so no request is admitted to a
 * replica whose drain has already finished. The last {@link #release()} after {@code stopAccepting()} completes
 * {@link #idle}. Health: a failed inference ({@link InferenceFailed}: never bad input, which the model reports as
 * {@code InvalidInput} and which fails only its request; only for a model whose request failures count,
 * {@link Model#requestFailuresMarkUnhealthy}) or probe adds to {@link #consecutiveFailures}, a success resets it;
 * reaching the threshold reports the replica unhealthy once (to the controller, which replaces it). Counters are
 * atomics written by predictor threads and the health-check thread; all fields are otherwise final or volatile.
 * Closing ({@link #close}) reports whether every predictor thread left the model, which decides whether the model may
 * be closed.
 *
 * <p>Validation: {@link #run} checks every input against this replica's own {@link #model} before queueing it, on
 * the dispatching thread. A request is thus judged by the version that runs it, also while a rolling update has two
 * versions serving, and input a version cannot take is refused (400) instead of failing in the model (500, counted
 * against the replica's health).
 */
public final class Replica<I, O> implements RoutableReplica<I, O> {

    private final String deployment;
    private final long id;
    private final String version;
    private final ServedModel served;
    private final BoundedCount slots;
    private final int failureThreshold;
    private final Duration exitGrace;
    private final PredictorPool<I, O> pool;
    private final Model<I, O> model;
    private final Consumer<String> onUnhealthy;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicBoolean reportedUnhealthy = new AtomicBoolean();
    private final CompletableFuture<Void> idle = new CompletableFuture<>();
    private final BiConsumer<List<O>, Throwable> health = this::recordOutcome;
    private volatile boolean accepting = true;
    private volatile CompletableFuture<List<O>> probe = CompletableFuture.completedFuture(null);
    /** {@link PredictorPool#finished} at the previous probe; health-check thread only. */
    private long finishedAtLastProbe;

    private Replica(String deployment, long id, DeploymentSpec spec, Model<I, O> model, PredictorPool<I, O> pool,
            Consumer<String> onUnhealthy) {
        this.model = model;
        this.deployment = deployment;
        this.id = id;
        this.version = spec.version();
        this.served = ServedModel.of(spec);
        this.slots = new BoundedCount(spec.admission().maxOngoingRequests());
        this.failureThreshold = spec.health().healthCheckFailureThreshold();
        this.exitGrace = exitGrace(spec);
        this.pool = pool;
        this.onUnhealthy = onUnhealthy;
    }

    /**
     * Starts the replica's predictor threads and waits until every predictor has answered the model's probe input.
     * Blocks the calling (launcher) thread for the warm-up.
     *
     * @param onUnhealthy called at most once, with the reason, when failures reach the spec's threshold
     * @throws Exception the warm-up failure; the replica's threads are stopped before it is thrown, and when one of
     *     them would not exit, a {@link PredictorsStuck} is attached as suppressed: the model must then not be closed
     */
    public static <I, O> Replica<I, O> start(DeploymentSpec spec, long id, Model<I, O> model, ThreadFactory threads,
            LongSupplier nanoTime, DeploymentMetrics metrics, Consumer<String> onUnhealthy) throws Exception {
        String name = spec.name() + "#" + id;
        PredictorPool<I, O> pool = new PredictorPool<>(spec.name(), name, spec.predictors().predictorThreads(),
                maxQueuedInputs(spec), spec.batching().maxBatchSize(), model, threads, nanoTime, metrics);
        tune(pool, spec);
        pool.start();
        try {
            pool.awaitWarmUp();
        } catch (Exception e) {
            if (!pool.close(Duration.ZERO, exitGrace(spec))) {
                e.addSuppressed(new PredictorsStuck(name));
            }
            throw e;
        }
        return new Replica<>(spec.name(), id, spec, model, pool, onUnhealthy);
    }

    /**
     * How long a replica's predictor threads get to leave the model once interrupted at close before they are
     * declared stuck: the spec's graceful shutdown timeout, at least {@link #MIN_EXIT_GRACE}.
     */
    public static Duration exitGrace(DeploymentSpec spec) {
        Duration drain = spec.rollout().gracefulShutdownTimeout();
        return drain.compareTo(MIN_EXIT_GRACE) < 0 ? MIN_EXIT_GRACE : drain;
    }

    private static final Duration MIN_EXIT_GRACE = Duration.ofSeconds(1);

    /** Attached (suppressed) to a start failure when a predictor thread of the failed replica would not exit. */
    public static final class PredictorsStuck extends IllegalStateException {
        public PredictorsStuck(String replica) {
            super("a predictor thread of replica " + replica + " did not exit; its model must stay open");
        }
    }

    /**
     * Inputs the replica's predictor queue may hold: every admitted request at its largest. Computed in {@code long}
     * and clamped below {@link Integer#MAX_VALUE} (both factors go up to a million), so that it never wraps negative
     * and the pool's {@code queued + n} checks stay in range.
     */
    static int maxQueuedInputs(DeploymentSpec spec) {
        return (int) Math.min((long) spec.admission().maxOngoingRequests() * spec.admission().maxInputsPerRequest(), MAX_QUEUED_INPUTS);
    }

    /** The largest queue bound: below {@link Integer#MAX_VALUE} with room for one request's inputs on top. */
    static final int MAX_QUEUED_INPUTS = Integer.MAX_VALUE - 8;

    @Override
    public long id() {
        return id;
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public ServedModel served() {
        return served;
    }

    @Override
    public int inFlight() {
        return slots.count();
    }

    @Override
    public boolean tryAcquire() {
        if (!accepting || !slots.tryAcquire()) {
            return false;
        }
        if (!accepting) {
            release();
            return false;
        }
        return true;
    }

    @Override
    public void release() {
        if (slots.release() == 0 && !accepting) {
            idle.complete(null);
        }
    }

    @Override
    public Model<I, O> model() {
        return model;
    }

    @Override
    public CompletableFuture<List<O>> run(List<I> inputs, long deadlineNanos) {
        for (int i = 0; i < inputs.size(); i++) {
            model.validate(inputs.get(i), i);
        }
        CompletableFuture<List<O>> result = pool.submit(inputs, deadlineNanos);
        if (model.requestFailuresMarkUnhealthy()) {
            result.whenComplete(health);
        }
        return result;
    }

    @Override
    public void tune(DeploymentSpec spec) {
        tune(pool, spec);
    }

    /**
     * Gives {@code pool} the settings of {@code spec} that change in place: batch size and wait, idle spin, token
     * budgets.
     */
    private static void tune(PredictorPool<?, ?> pool, DeploymentSpec spec) {
        pool.tune(spec.batching().maxBatchSize(), spec.batching().batchWaitTimeout(), spec.predictors().idleSpin());
        pool.budgetTokens(spec.batching().maxBatchTokens(), spec.admission().maxTokensPerRequest());
    }

    /**
     * Runs the probe input (health-check thread). A probe still unanswered from the previous period counts as a
     * failure, a predictor that hangs being as unhealthy as one that throws, unless it waits behind work that is
     * moving: the predictors finished an inference during the period (slow work, not a hang), or the model waits on
     * calls to other deployments ({@link Model#waitsOnOtherDeployments}: a pipeline behind a slow or cold-starting
     * step). Never throws: an exception would end the periodic health check for good.
     */
    public void probe() {
        if (!accepting) {
            return;
        }
        long done = pool.finished();
        boolean progressed = done != finishedAtLastProbe;
        finishedAtLastProbe = done;
        if (!probe.isDone()) {
            if (!progressed && !model.waitsOnOtherDeployments()) {
                recordFailure("health check of replica " + deployment + "#" + id + " did not answer within its period");
            }
            return;
        }
        CompletableFuture<List<O>> next;
        try {
            next = pool.probe();
        } catch (RuntimeException e) {
            return; // the replica's queue is full of real work, or it is stopping: no probe this period
        }
        probe = next;
        next.whenComplete(health);
    }

    private void recordOutcome(List<O> outputs, Throwable failure) {
        if (failure == null) {
            consecutiveFailures.set(0);
        } else if (failure instanceof InferenceFailed || failure.getCause() instanceof InferenceFailed) {
            recordFailure(failure.getMessage());
        }
    }

    private void recordFailure(String reason) {
        if (consecutiveFailures.incrementAndGet() >= failureThreshold && reportedUnhealthy.compareAndSet(false, true)) {
            onUnhealthy.accept(reason);
        }
    }

    /** Consecutive failed inferences or probes. */
    public int consecutiveFailures() {
        return consecutiveFailures.get();
    }

    /** Stops admitting requests; those already admitted go on. */
    public void stopAccepting() {
        accepting = false;
        if (slots.count() == 0) {
            idle.complete(null);
        }
    }

    /**
     * Waits until no admitted request is left, for at most {@code timeout}. Call after {@link #stopAccepting()}.
     *
     * @return whether the replica became idle in time
     */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        try {
            idle.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Stops the predictor threads (finishing queued work for up to {@code drain}, then interrupting them and giving
     * them {@link #exitGrace} to leave the model) and closes their predictors.
     *
     * @return whether every predictor thread exited: only then may the model be closed. False when one is still
     *     inside the model (hung in native code), named in a WARNING; the model must then be left open.
     */
    public boolean close(Duration drain) {
        accepting = false;
        return pool.close(drain, exitGrace);
    }

    /** Inputs admitted to the predictor queue and not yet taken by a predictor (status and tests). */
    public int queuedInputs() {
        return pool.queuedInputs();
    }
}
