package dev.serval.replica;

import dev.serval.error.InferenceFailed;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.predictor.Model;
import dev.serval.predictor.Predictor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * A fixed set of predictor threads, each owning one predictor made from a shared model, fed by one queue
 * with a hard bound on waiting inputs.
 *
 * <p>Design. Callers (HTTP event loops) call {@link #submit} and never block on it: admission is a CAS on
 * {@link #queued}, which counts inputs admitted but not yet taken by a worker; a request whose inputs do not
 * all fit is refused whole with {@link Overloaded} before anything is queued. Each input becomes one task and
 * runs alone on whichever worker takes it, so a multi-input request fans out over all predictors and a
 * result never depends on what it ran next to. The last task of a request to finish completes the request's
 * future, on that worker's thread. A request whose future is already done (failed, or cancelled by its caller)
 * has its remaining tasks skipped without running the model.
 *
 * <p>Threads and fields: {@link #queue} and {@link #queued} are shared by callers and workers;
 * {@link #serviceNanos} is written by workers without coordination and read for Retry-After estimates
 * (best-effort by design: a lost update only ages the estimate); {@link #accepting} and {@link #stopped} are
 * written once each by the closing thread; a worker stops at its next task once {@link #stopped} is set. Each {@link Predictor} is created, used and closed by one worker.
 *
 * <p>Shutdown ({@link #close}): stop admitting, let workers finish what is queued (a poison task per worker
 * ends each loop), wait up to the drain timeout, interrupt what remains, then fail anything still queued
 * with {@link NotReady}. A submit racing with shutdown re-checks {@link #stopped} after queueing and fails its
 * own leftovers, so no request is left without an answer.
 */
final class PredictorPool<I, O> {

    private static final System.Logger LOG = System.getLogger(PredictorPool.class.getName());
    /** The longest Retry-After given: an estimate beyond a minute is noise. */
    private static final long MAX_RETRY_AFTER_SECONDS = 60;
    private static final Task<?, ?> POISON = new Task<>(null, -1, null, 0);

    private final String deployment;
    private final Model<I, O> model;
    private final int maxQueuedInputs;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final LinkedBlockingQueue<Task<I, O>> queue = new LinkedBlockingQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final Thread[] workers;
    private final boolean batches;
    /** Inputs one inference may take; changed at run time by {@link #tune}. */
    private volatile int maxBatch;
    /** How long a predictor may wait to fill a batch while another is busy and a backlog is queued; see {@link #tune}. */
    private volatile long batchWaitNanos;
    /** Predictors running an inference now: a predictor waits for a fuller batch only while another one is busy. */
    private final AtomicInteger busy = new AtomicInteger();
    private final CountDownLatch warmedUp;
    private final AtomicReference<Throwable> warmUpFailure = new AtomicReference<>();
    private volatile long serviceNanos = TimeUnit.MILLISECONDS.toNanos(10);
    private volatile boolean accepting = true;
    private volatile boolean stopped;

    PredictorPool(String deployment, int predictorThreads, int maxQueuedInputs, Model<I, O> model,
            ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this(deployment, predictorThreads, maxQueuedInputs, 1, model, threads, nanoTime, metrics);
    }

    /** @param maxBatch inputs one inference may take when the model batches ({@link Model#batching()}) */
    PredictorPool(String deployment, int predictorThreads, int maxQueuedInputs, int maxBatch, Model<I, O> model,
            ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.metrics = metrics;
        this.batches = model.batching().batched();
        this.maxBatch = batches ? maxBatch : 1;
        this.model = model;
        this.maxQueuedInputs = maxQueuedInputs;
        this.nanoTime = nanoTime;
        this.workers = new Thread[predictorThreads];
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
     * Queues every input of one request, or none of them.
     *
     * @return completed on a predictor thread with the outputs in input order, or exceptionally with
     *     {@link InferenceFailed} / {@link NotReady}
     * @throws Overloaded when the queue cannot take all the inputs
     * @throws NotReady   when the pool is shutting down
     */
    CompletableFuture<List<O>> submit(List<I> inputs) {
        if (!accepting) {
            throw new NotReady("model '" + deployment + "' is shutting down");
        }
        int n = inputs.size();
        for (;;) {
            int current = queued.get();
            if ((long) current + n > maxQueuedInputs) {
                throw new Overloaded("model '" + deployment + "' is overloaded: " + current + " inputs queued, "
                        + n + " more would exceed max-queued-inputs " + maxQueuedInputs, retryAfter(current));
            }
            if (queued.compareAndSet(current, current + n)) {
                break;
            }
        }
        Request<O> request = new Request<>(n);
        long now = nanoTime.getAsLong();
        for (int i = 0; i < n; i++) {
            queue.add(new Task<>(inputs.get(i), i, request, now));
        }
        if (stopped) {
            failQueued();
        }
        return request.future;
    }

    /**
     * Changes the batch limit and the batch wait of running predictors (from their next batch on). Models that do not
     * batch keep running one input at a time.
     */
    void tune(int maxBatchSize, Duration batchWait) {
        maxBatch = batches ? maxBatchSize : 1;
        batchWaitNanos = batchWait.toNanos();
    }

    /** The model's probe input, run like a one-input request (a health check). */
    CompletableFuture<List<O>> probe() {
        return submit(List.of(model.probeInput()));
    }

    /** Inputs admitted and not yet taken by a predictor. */
    int queuedInputs() {
        return queued.get();
    }

    /** Stops admitting, drains queued work for up to {@code drain}, then stops the workers. Idempotent. */
    void close(Duration drain) {
        if (!accepting) {
            return;
        }
        accepting = false;
        for (int i = 0; i < workers.length; i++) {
            queue.add(poison());
        }
        long deadline = System.nanoTime() + drain.toNanos();
        for (Thread worker : workers) {
            try {
                long left = deadline - System.nanoTime();
                if (left > 0) {
                    worker.join(Duration.ofNanos(left));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stopped = true;
        for (Thread worker : workers) {
            if (worker.isAlive()) {
                LOG.log(System.Logger.Level.WARNING, "model ''{0}'': predictor thread {1} still busy after the {2} "
                        + "drain timeout; interrupting it", deployment, worker.getName(), drain);
                worker.interrupt();
            }
        }
        failQueued();
    }

    private void failQueued() {
        Task<I, O> task;
        while ((task = queue.poll()) != null) {
            if (task.request != null) {
                queued.decrementAndGet();
                task.request.fail(new NotReady("model '" + deployment + "' shut down before running this request"));
            }
        }
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
                long start = nanoTime.getAsLong();
                predictor.predict(model.probeInput());
                serviceNanos = nanoTime.getAsLong() - start;
            } catch (Throwable t) {
                warmUpFailure.compareAndSet(null, t);
                return;
            } finally {
                warmedUp.countDown();
            }
            serve(predictor);
        }
    }

    private void serve(Predictor<I, O> predictor) {
        List<Task<I, O>> batch = new ArrayList<>();
        List<I> inputs = new ArrayList<>();
        while (!stopped) {
            Task<I, O> task;
            try {
                task = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (task.request == null) {
                return;
            }
            batch.clear();
            if (take(task)) {
                batch.add(task);
            }
            boolean stopAfter = fill(batch);
            batch.removeIf(queued -> queued.request.future.isDone()); // expired or cancelled while the batch formed
            if (!batch.isEmpty() && !run(predictor, batch, inputs)) {
                return;
            }
            if (stopAfter) {
                return;
            }
        }
    }

    /**
     * Fills {@code batch}: first, without waiting, up to this predictor's fair share of the queue (its length divided by
     * the number of predictors, at most {@link #maxBatch}), so that predictors split a full queue instead of one taking
     * it all; then, only while another predictor is busy and inputs are left in the queue (a backlog: the replica is
     * not keeping up), it may take more and wait up to {@link #batchWaitNanos} for more still, up to {@link #maxBatch}.
     * An idle replica never waits, so a lone input runs at once; nor does a predictor whose take emptied the queue,
     * since waiting for company then only adds latency (and leaves a core idle) while batches still form by
     * themselves once inputs queue up.
     *
     * @return whether a stop signal was taken (the worker stops after this batch)
     */
    private boolean fill(List<Task<I, O>> batch) {
        int max = maxBatch;
        int share = (int) Math.max(1, Math.min(max,
                ((long) queued.get() + batch.size() + workers.length - 1) / workers.length));
        while (batch.size() < share) {
            Task<I, O> next = queue.poll();
            if (next == null) {
                break;
            }
            if (next.request == null) {
                return true;
            }
            if (take(next)) {
                batch.add(next);
            }
        }
        long wait = batchWaitNanos;
        if (wait <= 0 || batch.isEmpty() || batch.size() >= max || busy.get() == 0 || queued.get() == 0) {
            return false;
        }
        long start = nanoTime.getAsLong();
        long waitUntil = start + wait;
        try {
            while (batch.size() < max) {
                long left = waitUntil - nanoTime.getAsLong();
                if (left <= 0) {
                    return false;
                }
                Task<I, O> next = queue.poll(left, TimeUnit.NANOSECONDS);
                if (next == null) {
                    return false;
                }
                if (next.request == null) {
                    return true;
                }
                if (take(next)) {
                    batch.add(next);
                }
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            metrics.batchWait(Math.min(nanoTime.getAsLong(), waitUntil) - start);
        }
    }

    /** Takes {@code task} off the admission count; false when its request is already done (failed or cancelled). */
    private boolean take(Task<I, O> task) {
        queued.decrementAndGet();
        return !task.request.future.isDone();
    }

    /** Runs one inference over {@code batch}; false when the pool stopped while it ran. */
    private boolean run(Predictor<I, O> predictor, List<Task<I, O>> batch, List<I> inputs) {
        busy.incrementAndGet();
        try {
            return runBusy(predictor, batch, inputs);
        } finally {
            busy.decrementAndGet();
        }
    }

    private boolean runBusy(Predictor<I, O> predictor, List<Task<I, O>> batch, List<I> inputs) {
        long start = nanoTime.getAsLong();
        inputs.clear();
        for (Task<I, O> task : batch) {
            metrics.predictorWait(start - task.queuedAt);
            inputs.add(task.input);
        }
        try {
            if (batch.size() == 1) {
                Task<I, O> only = batch.getFirst();
                only.request.complete(only.index, predictor.predict(only.input));
            } else {
                List<O> outputs = predictor.predictBatch(inputs);
                for (int i = 0; i < batch.size(); i++) {
                    Task<I, O> task = batch.get(i);
                    task.request.complete(task.index, outputs.get(i));
                }
            }
        } catch (Throwable t) {
            if (stopped) {
                for (Task<I, O> task : batch) {
                    task.request.fail(new NotReady("model '" + deployment + "' shut down while running this request"));
                }
                return false;
            }
            LOG.log(System.Logger.Level.ERROR, "model '" + deployment + "' failed on "
                    + (batch.size() == 1 ? "input " + batch.getFirst().index : "a batch of " + batch.size()), t);
            for (Task<I, O> task : batch) {
                task.request.fail(new InferenceFailed("model '" + deployment + "' failed: " + t, t));
            }
        }
        long took = nanoTime.getAsLong() - start;
        metrics.inference(took);
        serviceNanos += (took / batch.size() - serviceNanos) >> 3;
        return true;
    }

    /** Time until {@code queuedNow} inputs drain through all workers at the observed per-input service time. */
    private Duration retryAfter(int queuedNow) {
        double nanos = (queuedNow + 1.0) * Math.max(serviceNanos, 0) / workers.length; // double: no overflow
        return Duration.ofSeconds((long) Math.max(1, Math.min(MAX_RETRY_AFTER_SECONDS, Math.ceil(nanos / 1e9))));
    }

    @SuppressWarnings("unchecked")
    private Task<I, O> poison() {
        return (Task<I, O>) POISON;
    }

    private record Task<I, O>(I input, int index, Request<O> request, long queuedAt) {
    }

    /**
     * The outputs of one request, filled by any worker. Each worker writes its slot and then decrements
     * {@code remaining}; the atomic decrement orders those writes before the last worker's read.
     */
    private static final class Request<O> {
        private final Object[] outputs;
        private final AtomicInteger remaining;
        private final CompletableFuture<List<O>> future = new CompletableFuture<>();

        Request(int size) {
            this.outputs = new Object[size];
            this.remaining = new AtomicInteger(size);
        }

        @SuppressWarnings("unchecked")
        void complete(int index, O output) {
            outputs[index] = output;
            if (remaining.decrementAndGet() == 0) {
                future.complete((List<O>) Collections.unmodifiableList(Arrays.asList(outputs)));
            }
        }

        void fail(Throwable failure) {
            future.completeExceptionally(failure);
        }
    }
}
