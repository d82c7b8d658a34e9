package dev.serval.replica;

import dev.serval.admission.RetryAfter;
import dev.serval.batching.BatchCosts;
import dev.serval.batching.BatchPolicy;
import dev.serval.batching.TokenBudget;
import dev.serval.error.InferenceFailed;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.BatchingDecision;
import dev.serval.model.InputTokens;
import dev.serval.model.Model;
import dev.serval.model.Predictor;
import dev.serval.request.CallContext;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A fixed set of predictor threads, each owning one predictor made from a shared model, fed by one
 * {@link InputQueue} with a hard bound on waiting inputs.
 *
 * <p>Design. Callers (HTTP event loops, the health checker) call {@link #submit} and never block on it: admission is
 * the queue's bounded count, taken by CAS for all of a request's inputs before anything is queued; a request whose
 * inputs do not all fit is refused whole with {@link Overloaded}. Each input becomes one {@link InputTask} and runs on
 * whichever worker takes it, alone or in a batch; the last task of a request to finish completes the request
 * ({@link PoolRequest}), on that worker's thread. How many tasks a worker takes, and whether it waits for more, is the
 * {@link BatchPolicy}'s answer, bounded for each take by the sizes measured cheapest per input ({@link BatchCosts}),
 * how many tokens they may hold the {@link TokenBudget}'s; each worker's {@link BatchFormer} forms its batches; running
 * a batch and handling its failures is the {@link BatchRunner}'s.
 *
 * <p>Tokens. A text model's inputs have tokens ({@link Model#maxInputTokens}), and two budgets bound them: a batch's
 * ({@code max_batch_tokens}) and a request's ({@code max_tokens_per_request}, fixed for a request when it is admitted:
 * {@link TokenBudget#forRequest}). A worker counts an input by tokenising it and hands that to the input's inference,
 * so an input is tokenised once, on a predictor thread ({@link BatchFormer}); only where a budget could be passed, so a
 * model that reads no tokens, and the defaults with a truncating model, count nothing.
 *
 * <p>Ending early. A request that ends before its tasks ran (its caller cancelled it, or it failed) gives back at once
 * the queue places of the tasks no worker has claimed and drops its inputs: the tasks left in the queue hold no input
 * and are skipped when a worker reaches them; so are those of a request whose deadline passed ({@link BatchRunner}).
 *
 * <p>Idle cores. When the model has a wide session ({@link Model#widens()}), an inference that starts while the other
 * predictors are idle and nothing is queued runs on all of the replica's cores, as long as such inferences are
 * measured faster than single-share ones on this machine now, and a predictor that takes work meanwhile waits for it
 * ({@link IdleCores}); under load every inference runs on its own share.
 *
 * <p>Idle spin. A worker that finds the queue empty keeps polling it for the spec's {@code idle_spin} (yielding its
 * core to any other runnable thread between polls) before it sleeps in the queue: a request that arrives meanwhile
 * starts without a thread wake-up, which costs a lone request a tenth of a millisecond or more on a VM. One worker
 * spins at a time ({@link InputQueue#take(long)}); under load the queue is never empty and nothing spins.
 *
 * <p>Threads and fields: {@link #queue} is shared by callers and workers; {@link #busy} is written by workers and read
 * by workers forming a batch; {@link #finished} is added to by workers after each inference and summed by the
 * health-check thread; {@link #idleCores} is taken and released by workers around each inference;
 * {@link #pace} is written by workers without coordination and read for Retry-After estimates (best-effort by design:
 * a lost update only ages the estimate); {@link #policy}, {@link #costs} (fed by workers, best-effort) and
 * {@link #idleSpinNanos} are replaced by {@link #tune}, {@link #tokenBudget} by {@link #budgetTokens} (the controller
 * thread), each read once per batch (the token budget also once per admitted request); {@link #accepting} and
 * {@link #stopped} are written once each by the closing thread; a worker stops at its next task once {@link #stopped}
 * is set. Each
 * {@link Predictor} is created, used and closed by one worker.
 *
 * <p>Shutdown ({@link #close}): stop admitting, let workers finish what is queued (a stop signal per worker ends each
 * loop), wait up to the drain timeout, interrupt what remains, fail anything still queued with {@link NotReady}, then
 * wait up to the exit grace for every worker thread to have left the model. Only then may the model be closed:
 * {@code close} says whether every worker exited, and a worker still inside the model (hung in native code) is named
 * in a WARNING, so the model it runs is left open rather than freed under it. A submit racing with shutdown re-checks
 * {@link #stopped} after queueing and fails its own leftovers, so no request is left without an answer.
 */
final class PredictorPool<I, O> {

    private static final System.Logger LOG = System.getLogger(PredictorPool.class.getName());

    private final String deployment;
    /** {@code deployment#id}, for logs. */
    private final String replica;
    private final Model<I, O> model;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final RetryAfter pace;
    private final InputQueue<I, O> queue;
    private final BatchRunner<I, O> runner;
    private final Thread[] workers;
    private final boolean batches;
    /** How workers form batches; replaced at run time by {@link #tune}. */
    private volatile BatchPolicy policy;
    /** The sizes measured cheapest per input, bounding each take; replaced by {@link #tune} when the bound changes. */
    private volatile BatchCosts costs;
    /** The token budgets and when they need counting; replaced by {@link #budgetTokens}. */
    private volatile TokenBudget tokenBudget;
    /** How long a worker that found the queue empty keeps looking before it sleeps; replaced by {@link #tune}. */
    private volatile long idleSpinNanos;
    /** Predictors running an inference now: a predictor waits for a fuller batch only while another one is busy. */
    private final AtomicInteger busy = new AtomicInteger();
    /** Inferences finished (answered or failed), for health checks: a pool that finishes work is not hung. */
    private final LongAdder finished = new LongAdder();
    /** Lends an idle replica's cores to a lone inference; null when the model has no wide session. */
    private final IdleCores idleCores;
    private final CountDownLatch warmedUp;
    private final AtomicReference<Throwable> warmUpFailure = new AtomicReference<>();
    private volatile boolean accepting = true;
    private volatile boolean stopped;
    private final AtomicBoolean closing = new AtomicBoolean();

    PredictorPool(String deployment, int predictorThreads, int maxQueuedInputs, Model<I, O> model,
            ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this(deployment, deployment, predictorThreads, maxQueuedInputs, 1, model, threads, nanoTime, metrics);
    }

    /**
     * @param replica  the replica's name ({@code deployment#id}), for logs
     * @param maxBatch inputs one inference may take when the model batches ({@link Model#batching()}); batches start
     *                 at the size its load preferred ({@link BatchingDecision#batchLimit}), then follow measured costs
     */
    PredictorPool(String deployment, String replica, int predictorThreads, int maxQueuedInputs, int maxBatch,
            Model<I, O> model, ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.replica = replica;
        this.metrics = metrics;
        this.batches = model.batching().batched();
        this.model = model;
        this.policy = BatchPolicy.of(batches, predictorThreads, maxBatch, Duration.ZERO);
        this.costs = BatchCosts.startingAt(policy.maxBatch(), model.batching()::batchLimit);
        this.tokenBudget = new TokenBudget(model.maxInputTokens(), BatchingSpec.DEFAULT_MAX_BATCH_TOKENS,
                AdmissionSpec.DEFAULT_MAX_TOKENS_PER_REQUEST);
        this.nanoTime = nanoTime;
        this.pace = RetryAfter.servicePaced(predictorThreads);
        this.queue = new InputQueue<>(deployment, maxQueuedInputs, pace);
        this.runner = new BatchRunner<>(deployment, replica, nanoTime, metrics, pace, () -> stopped);
        this.workers = new Thread[predictorThreads];
        this.idleCores = model.widens() && predictorThreads > 1 ? new IdleCores(predictorThreads) : null;
        this.warmedUp = new CountDownLatch(workers.length);
        for (int i = 0; i < workers.length; i++) {
            workers[i] = threads.newThread(this::work);
        }
    }

    /** Starts the workers; each creates its predictor and runs the model's probe input once. */
    void start() {
        for (Thread worker : workers) {
            worker.start();
        }
    }

    /**
     * Waits until every worker has a predictor that answered the probe.
     *
     * @throws Exception the first worker's failure, if any failed
     */
    void awaitWarmUp() throws Exception {
        warmedUp.await();
        Throwable failure = warmUpFailure.get();
        if (failure instanceof Exception e) {
            throw e;
        } else if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /**
     * Queues every input of one request, or none of them, to run before {@code deadlineNanos} (then dropped unrun).
     *
     * @return completed on a predictor thread: the outputs in input order, or failed ({@link InferenceFailed}...)
     * @throws Overloaded when the queue cannot take all the inputs
     * @throws NotReady   when the pool is shutting down
     */
    CompletableFuture<List<O>> submit(List<I> inputs, long deadlineNanos) {
        if (!accepting) {
            throw new NotReady("model '" + deployment + "' is shutting down");
        }
        PoolRequest<I, O> request = queue.admit(inputs, deadlineNanos, nanoTime.getAsLong(),
                tokenBudget.forRequest(inputs.size()));
        if (stopped) {
            failQueued();
        }
        return request;
    }

    /**
     * Changes the batch bound and the batch wait of running predictors (from their next batch on), and how long an idle
     * one spins before it sleeps (from its next wait on). A new bound starts the measured costs afresh. Models that do
     * not batch keep running one input at a time.
     */
    void tune(int maxBatchSize, Duration batchWait, Duration idleSpin) {
        policy = BatchPolicy.of(batches, workers.length, maxBatchSize, batchWait);
        costs = costs.withBound(policy.maxBatch());
        idleSpinNanos = idleSpin.toNanos();
    }

    /**
     * Changes the token budgets ({@code max_batch_tokens}, {@code max_tokens_per_request}): batches from the next one
     * on, requests from the next admitted. Inert for a model that reads no tokens ({@link Model#maxInputTokens}).
     */
    void budgetTokens(int maxBatchTokens, int maxTokensPerRequest) {
        tokenBudget = new TokenBudget(model.maxInputTokens(), maxBatchTokens, maxTokensPerRequest);
    }

    /** The model's probe input, run like a one-input request (a health check). */
    CompletableFuture<List<O>> probe() {
        return submit(List.of(model.probeInput()), CallContext.NO_DEADLINE);
    }

    /** Inferences finished since the pool started, answered or failed (the health check's sign of progress). */
    long finished() {
        return finished.sum();
    }

    /** Predictors waiting for a lone inference to give back the cores it borrowed (tests and diagnostics). */
    int waitingForCores() {
        return idleCores == null ? 0 : idleCores.waiting();
    }

    /** Inputs admitted and not yet taken by a predictor. */
    int queuedInputs() {
        return queue.queuedInputs();
    }

    /**
     * Stops admitting, drains queued work for up to {@code drain}, stops the workers (interrupting those still
     * busy), fails what is still queued, then waits up to {@code exitGrace} for every worker thread to exit.
     * Idempotent: a second call only reports.
     *
     * @return whether every worker thread has exited, so that nothing runs the model any more and it may be closed;
     *     false when one is still inside it (each such thread is named in a WARNING)
     */
    boolean close(Duration drain, Duration exitGrace) {
        if (!closing.compareAndSet(false, true)) {
            return allExited();
        }
        accepting = false;
        queue.addStops(workers.length);
        joinAll(drain);
        stopped = true;
        for (Thread worker : workers) {
            if (worker.isAlive()) {
                LOG.log(System.Logger.Level.WARNING, "replica {0}: predictor thread {1} still busy after the {2} "
                        + "drain timeout; interrupting it", replica, worker.getName(), drain);
                worker.interrupt();
            }
        }
        failQueued();
        joinAll(exitGrace);
        boolean exited = true;
        for (Thread worker : workers) {
            if (worker.isAlive()) {
                exited = false;
                LOG.log(System.Logger.Level.WARNING, "replica {0}: predictor thread {1} is still running model ''{2}'' "
                        + "{3} after it was interrupted (hung in native code?); the model is left open, never closed "
                        + "under it", replica, worker.getName(), deployment, exitGrace);
            }
        }
        return exited;
    }

    /** Whether every worker thread has exited. */
    boolean allExited() {
        for (Thread worker : workers) {
            if (worker.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** Waits for the workers to exit, for at most {@code timeout} in all; returns early if this thread is interrupted. */
    private void joinAll(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread worker : workers) {
            try {
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    worker.join(Duration.ofNanos(left));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void failQueued() {
        queue.failAll("model '" + deployment + "' shut down before running this request");
    }

    private void work() {
        Predictor<I, O> predictor;
        try {
            predictor = model.newPredictor(metrics);
        } catch (Throwable t) {
            warmUpFailure.compareAndSet(null, t);
            warmedUp.countDown();
            return;
        }
        try (predictor) {
            try {
                warmUp(predictor);
            } catch (Throwable t) {
                warmUpFailure.compareAndSet(null, t);
                return;
            } finally {
                warmedUp.countDown();
            }
            serve(predictor);
        }
    }

    /**
     * Runs the probe input once on each of the model's sessions, holding the cores each uses like any inference: the
     * wide session's first inference pays for its set-up, not a request's. The narrow run's time seeds the pace.
     */
    private void warmUp(Predictor<I, O> predictor) throws Exception {
        if (idleCores != null) {
            idleCores.takeAll();
            try {
                predictor.widen(true);
                predictor.predict(model.probeInput());
            } finally {
                predictor.widen(false);
                idleCores.release(true);
            }
            idleCores.take();
        }
        try {
            long start = nanoTime.getAsLong();
            predictor.predict(model.probeInput());
            pace.reset(nanoTime.getAsLong() - start);
        } finally {
            if (idleCores != null) {
                idleCores.release(false);
            }
        }
    }

    private void serve(Predictor<I, O> predictor) {
        BatchFormer<I, O> batches = new BatchFormer<>(deployment, queue, predictor,
                () -> costs.bound(policy, queue.queuedInputs(), 1), () -> tokenBudget, busy::get, nanoTime, metrics);
        List<I> inputs = new ArrayList<>();
        List<InputTokens> tokens = new ArrayList<>();
        try {
            while (!stopped) {
                List<InputTask<I, O>> batch = batches.next(idleSpinNanos);
                if (batch == null || (!batch.isEmpty() && !run(predictor, batch, inputs, tokens,
                        costs.timing(batch.size(), queue.queuedInputs())))) {
                    return;
                }
            }
        } finally {
            batches.abandon();
        }
    }

    /**
     * Runs one inference over {@code batch}, counted as busy; false when the pool stopped while it ran. When the model
     * widens, it first takes this predictor's cores ({@link IdleCores}), and every idle one's too when nothing is
     * queued and widened inferences of the batch's size are measured faster, and runs widened if it got them; timed for
     * {@code measured} (if not null) unless widened.
     */
    private boolean run(Predictor<I, O> predictor, List<InputTask<I, O>> batch, List<I> inputs,
            List<InputTokens> tokens, BatchCosts measured) {
        if (idleCores == null) {
            busy.incrementAndGet();
            try {
                return runner.run(predictor, batch, inputs, tokens, measured, measured == null ? 0 : size(batch));
            } finally {
                busy.decrementAndGet();
                finished.increment();
            }
        }
        idleCores.take();
        boolean idle = queue.queuedInputs() == 0 && busy.get() == 0; // nothing waits, no other predictor runs
        long size = idle || measured != null ? size(batch) : 0;
        boolean borrowed = idle && idleCores.prefersWide(size) && idleCores.borrowAll();
        predictor.widen(borrowed);
        if (borrowed) {
            metrics.widened();
        }
        busy.incrementAndGet();
        long start = nanoTime.getAsLong();
        try {
            return runner.run(predictor, batch, inputs, tokens, borrowed ? null : measured, size);
        } finally {
            if (borrowed || (idle && busy.get() == 1)) { // it ran alone from start to end, widened or not
                idleCores.lone(size, borrowed, nanoTime.getAsLong() - start);
            }
            busy.decrementAndGet();
            finished.increment();
            idleCores.release(borrowed);
        }
    }

    /**
     * The batch's size for lending and for its cost per unit ({@link Model#inputSize}, summed over its inputs; those
     * whose requests ended are left out, as the runner leaves them out). Read from the tasks: the predictor's scratch
     * list is filled only by the run.
     */
    private long size(List<InputTask<I, O>> batch) {
        long size = 0;
        for (InputTask<I, O> task : batch) {
            I input = task.request().input(task.index());
            if (input != null) {
                size += model.inputSize(input);
            }
        }
        return size;
    }
}
