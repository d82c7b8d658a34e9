package dev.serval.replica;

import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.Model;
import dev.serval.model.Predictor;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * A fixed set of predictor threads, each owning one predictor made from a shared model, fed by one queue
 * with a hard bound on waiting inputs.
 *
 * <p>Design. Callers (HTTP event loops) call {@link #submit} and never block on it: admission is a CAS on
 * {@link #queued}, which counts inputs admitted and not yet claimed; a request whose inputs do not all fit is refused
 * whole with {@link Overloaded} before anything is queued. Each input becomes one {@link Task} (its request and index,
 * not the input itself) and runs on whichever worker takes it, alone or in a batch; the last task of a request to
 * finish completes the request, on that worker's thread.
 *
 * <p>Ending early. A {@link Request} is the caller's future. When it ends before its tasks ran (its caller cancelled
 * it, or it failed), it gives back at once the queue places of the tasks no worker has claimed ({@code unclaimed},
 * swapped to 0; a worker claims a task by decrementing it while positive, so each place is given back exactly once)
 * and drops its inputs: the tasks left in {@link #queue} hold no input and are skipped when a worker reaches them.
 *
 * <p>Failures. A model signals input it cannot take with {@link InvalidInput}: that fails only its own request, as a
 * client error (400), and never counts against the replica's health. Any other exception is an
 * {@link InferenceFailed}. A batch that fails (for any reason) is run again one input at a time, so one bad input
 * fails alone and the others are answered; only an input that fails alone with a non-input error is an
 * {@link InferenceFailed}.
 *
 * <p>Threads and fields: {@link #queue} and {@link #queued} are shared by callers and workers;
 * {@link #serviceNanos} is written by workers without coordination and read for Retry-After estimates
 * (best-effort by design: a lost update only ages the estimate); {@link #accepting} and {@link #stopped} are
 * written once each by the closing thread; a worker stops at its next task once {@link #stopped} is set. Each
 * {@link Predictor} is created, used and closed by one worker.
 *
 * <p>Shutdown ({@link #close}): stop admitting, let workers finish what is queued (a poison task per worker
 * ends each loop), wait up to the drain timeout, interrupt what remains, fail anything still queued with
 * {@link NotReady}, then wait up to the exit grace for every worker thread to have left the model. Only then may the
 * model be closed: {@code close} says whether every worker exited, and a worker still inside the model (hung in native
 * code) is named in a WARNING, so the model it runs is left open rather than freed under it. A submit racing with
 * shutdown re-checks {@link #stopped} after queueing and fails its own leftovers, so no request is left without an
 * answer.
 */
final class PredictorPool<I, O> {

    private static final System.Logger LOG = System.getLogger(PredictorPool.class.getName());
    /** The longest Retry-After given: an estimate beyond a minute is noise. */
    private static final long MAX_RETRY_AFTER_MILLIS = 60_000;
    private static final Task<?, ?> POISON = new Task<>(null, -1, 0);

    private final String deployment;
    /** {@code deployment#id}, for logs. */
    private final String replica;
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
    private final AtomicBoolean closing = new AtomicBoolean();

    PredictorPool(String deployment, int predictorThreads, int maxQueuedInputs, Model<I, O> model,
            ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this(deployment, deployment, predictorThreads, maxQueuedInputs, 1, model, threads, nanoTime, metrics);
    }

    /**
     * @param replica  the replica's name ({@code deployment#id}), for logs
     * @param maxBatch inputs one inference may take when the model batches ({@link Model#batching()})
     */
    PredictorPool(String deployment, String replica, int predictorThreads, int maxQueuedInputs, int maxBatch,
            Model<I, O> model, ThreadFactory threads, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.replica = replica;
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
        Request<I, O> request = new Request<>(inputs, queued);
        long now = nanoTime.getAsLong();
        for (int i = 0; i < n; i++) {
            queue.add(new Task<>(request, i, now));
        }
        if (stopped) {
            failQueued();
        }
        return request;
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
        for (int i = 0; i < workers.length; i++) {
            queue.add(poison());
        }
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
        Task<I, O> task;
        while ((task = queue.poll()) != null) {
            if (task.request != null && task.request.claimTask()) {
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
            batch.removeIf(queued -> queued.request.isDone()); // expired or cancelled while the batch formed
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

    /**
     * Claims {@code task} and takes it off the admission count; false when its request already ended (failed or
     * cancelled: its place was given back then, and it has no input left to run).
     */
    private boolean take(Task<I, O> task) {
        if (!task.request.claimTask()) {
            return false;
        }
        queued.decrementAndGet();
        return !task.request.isDone();
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
        for (int i = 0; i < batch.size(); i++) {
            Task<I, O> task = batch.get(i);
            I input = task.request.input(task.index);
            if (input == null) { // its request ended since the batch formed: it holds no inputs any more
                batch.remove(i--);
                continue;
            }
            metrics.predictorWait(start - task.queuedAt);
            inputs.add(input);
        }
        if (batch.isEmpty()) {
            return true;
        }
        try {
            if (batch.size() == 1) {
                Task<I, O> only = batch.getFirst();
                // the request tells the predictor when it is abandoned (a chunked text stops between its windows)
                only.request.answer(only.index, predictor.predict(inputs.getFirst(), only.request));
            } else {
                List<O> outputs = predictor.predictBatch(inputs);
                for (int i = 0; i < batch.size(); i++) {
                    Task<I, O> task = batch.get(i);
                    task.request.answer(task.index, outputs.get(i));
                }
            }
        } catch (Throwable t) {
            if (stopped) {
                failStopped(batch);
                return false;
            }
            if (batch.size() == 1) {
                failAlone(batch.getFirst(), t);
            } else {
                LOG.log(System.Logger.Level.WARNING, "replica {0}: a batch of {1} failed ({2}); running its inputs "
                        + "one at a time", replica, batch.size(), t.toString());
                for (int i = 0; i < batch.size(); i++) {
                    if (!runAlone(predictor, batch.get(i), inputs.get(i))) {
                        failStopped(batch.subList(i, batch.size()));
                        return false;
                    }
                }
            }
        }
        long took = nanoTime.getAsLong() - start;
        metrics.inference(took);
        serviceNanos += (took / batch.size() - serviceNanos) >> 3;
        return true;
    }

    /** Runs one input of a failed batch alone; false when the pool stopped while it ran. */
    private boolean runAlone(Predictor<I, O> predictor, Task<I, O> task, I input) {
        if (task.request.isDone()) {
            return true; // another input of its request failed already, or its caller went away
        }
        try {
            task.request.answer(task.index, predictor.predict(input));
        } catch (Throwable t) {
            if (stopped) {
                return false;
            }
            failAlone(task, t);
        }
        return true;
    }

    /** Fails the request of an input that failed on its own: as bad input when the model said so, else as a failure. */
    private void failAlone(Task<I, O> task, Throwable failure) {
        InvalidInput invalid = invalidInput(failure);
        if (invalid != null) {
            task.request.fail(invalid);
            return;
        }
        LOG.log(System.Logger.Level.ERROR, "replica " + replica + ": model '" + deployment + "' failed on input "
                + task.index, failure);
        task.request.fail(new InferenceFailed("model '" + deployment + "' failed: " + failure, failure));
    }

    private void failStopped(List<Task<I, O>> tasks) {
        for (Task<I, O> task : tasks) {
            task.request.fail(new NotReady("model '" + deployment + "' shut down while running this request"));
        }
    }

    /** The {@link InvalidInput} that {@code failure} is or wraps (engines wrap what a translator throws), or null. */
    private static InvalidInput invalidInput(Throwable failure) {
        Throwable cause = failure;
        for (int depth = 0; cause != null && depth < 8; depth++, cause = cause.getCause()) {
            if (cause instanceof InvalidInput invalid) {
                return invalid;
            }
        }
        return null;
    }

    /** Time until {@code queuedNow} inputs drain through all workers at the observed per-input service time. */
    private Duration retryAfter(int queuedNow) {
        double nanos = (queuedNow + 1.0) * Math.max(serviceNanos, 0) / workers.length; // double: no overflow
        return Duration.ofMillis((long) Math.max(1, Math.min(MAX_RETRY_AFTER_MILLIS, Math.ceil(nanos / 1e6))));
    }

    @SuppressWarnings("unchecked")
    private Task<I, O> poison() {
        return (Task<I, O>) POISON;
    }

    /** One input of a request, by index: the input itself stays with the request, which drops it when it ends. */
    private record Task<I, O>(Request<I, O> request, int index, long queuedAt) {
    }

    /**
     * One request: the caller's future, its inputs and its outputs, filled by any worker. Each worker writes its
     * output slot and then decrements {@code remaining}; the atomic decrement orders those writes before the last
     * worker's read. {@code unclaimed} counts tasks still holding a place in the pool's queue count; see the pool's
     * design comment. {@link #inputs} is written at construction and set to null (volatile) when the request ends.
     */
    private static final class Request<I, O> extends CompletableFuture<List<O>> implements BooleanSupplier {
        private static final VarHandle REMAINING;
        private static final VarHandle UNCLAIMED;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                REMAINING = lookup.findVarHandle(Request.class, "remaining", int.class);
                UNCLAIMED = lookup.findVarHandle(Request.class, "unclaimed", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final Object[] outputs;
        private final AtomicInteger queued;
        private volatile List<I> inputs;
        @SuppressWarnings("unused") // through REMAINING
        private volatile int remaining;
        @SuppressWarnings("unused") // through UNCLAIMED
        private volatile int unclaimed;

        /** @param queued the pool's admission count, given back when the request ends with tasks unclaimed */
        Request(List<I> inputs, AtomicInteger queued) {
            this.outputs = new Object[inputs.size()];
            this.queued = queued;
            this.inputs = inputs;
            this.remaining = inputs.size();
            this.unclaimed = inputs.size();
        }

        /** The input at {@code index}, or null once the request has ended. */
        I input(int index) {
            List<I> held = inputs;
            return held == null ? null : held.get(index);
        }

        /** Claims one task's place in the queue count; false once the request ended and gave back the rest. */
        boolean claimTask() {
            for (;;) {
                int left = (int) UNCLAIMED.getVolatile(this);
                if (left == 0) {
                    return false;
                }
                if (UNCLAIMED.compareAndSet(this, left, left - 1)) {
                    return true;
                }
            }
        }

        @SuppressWarnings("unchecked")
        void answer(int index, O output) {
            outputs[index] = output;
            if ((int) REMAINING.getAndAdd(this, -1) == 1) {
                complete((List<O>) Collections.unmodifiableList(Arrays.asList(outputs)));
            }
        }

        void fail(Throwable failure) {
            completeExceptionally(failure);
        }

        /** Whether the request is abandoned: done before its outputs were (failed, cancelled, expired). */
        @Override
        public boolean getAsBoolean() {
            return isDone();
        }

        @Override
        public boolean complete(List<O> value) {
            return ended(super.complete(value));
        }

        @Override
        public boolean completeExceptionally(Throwable failure) {
            return ended(super.completeExceptionally(failure));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            return ended(super.cancel(mayInterruptIfRunning));
        }

        /** Gives back the places of unclaimed tasks and drops the inputs, once, when the request ends. */
        private boolean ended(boolean endedHere) {
            if (endedHere) {
                int left = (int) UNCLAIMED.getAndSet(this, 0);
                if (left > 0) {
                    queued.addAndGet(-left);
                }
                inputs = null;
            }
            return endedHere;
        }
    }
}
