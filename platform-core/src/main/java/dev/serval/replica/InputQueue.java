package dev.serval.replica;

import dev.serval.admission.BoundedCount;
import dev.serval.admission.RetryAfter;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The inputs waiting for a replica's predictors, with a hard bound on how many: admission to a {@link PredictorPool}.
 *
 * <p>Design. {@link #tasks} holds one {@link InputTask} per admitted input (and the stop signals); {@link #queued} is
 * a {@link BoundedCount} of the inputs admitted and not yet claimed, bounded by {@code max_queued_inputs}. Callers
 * (request threads, the health checker) {@link #admit}: the count is taken for all of a request's inputs at once, by
 * CAS, before anything is queued, so a request whose inputs do not all fit is refused whole with {@link Overloaded}
 * and its {@link RetryAfter} estimate. Predictors take tasks and {@link #claim} them, which gives back the place; a
 * request that ends early gives back the places of its unclaimed tasks itself (see {@link PoolRequest}), and the
 * tasks it leaves behind are skipped by the claim. The closing thread adds stop signals and fails what is left
 * ({@link #failAll}). Nothing here locks beyond the queue's own; {@link #queuedInputs()} is a best-effort read, and
 * {@link #spinning} is taken by CAS and given back by the predictor that took it.
 */
final class InputQueue<I, O> {

    private final String deployment;
    private final LinkedBlockingQueue<InputTask<I, O>> tasks = new LinkedBlockingQueue<>();
    private final BoundedCount queued;
    private final RetryAfter retryAfter;
    /** Whether a taker is spinning now ({@link #take(long)}). */
    private final AtomicBoolean spinning = new AtomicBoolean();

    /**
     * @param deployment      the deployment's name, for refusals
     * @param maxQueuedInputs inputs admitted and not yet claimed, at most
     * @param retryAfter      the estimate a refusal carries
     */
    InputQueue(String deployment, int maxQueuedInputs, RetryAfter retryAfter) {
        this.deployment = deployment;
        this.queued = new BoundedCount(maxQueuedInputs);
        this.retryAfter = retryAfter;
    }

    /**
     * Queues every input of one request, or none of them.
     *
     * @param nowNanos when they are queued
     * @throws Overloaded when the queue cannot take all the inputs
     */
    PoolRequest<I, O> admit(List<I> inputs, long nowNanos) {
        int n = inputs.size();
        if (!queued.tryAcquire(n)) {
            int current = queued.count();
            throw new Overloaded("model '" + deployment + "' is overloaded: " + current + " inputs queued, "
                    + n + " more would exceed max-queued-inputs " + queued.limit(), retryAfter.estimate(current));
        }
        PoolRequest<I, O> request = new PoolRequest<>(inputs, queued);
        for (int i = 0; i < n; i++) {
            tasks.add(new InputTask<>(request, i, nowNanos));
        }
        return request;
    }

    /** The next task, waiting for one. */
    InputTask<I, O> take() throws InterruptedException {
        return tasks.take();
    }

    /**
     * The next task: looked for during {@code spinNanos} of wall time, the core given to any other runnable thread
     * between looks ({@link Thread#yield}), then waited for asleep. A task queued during the spin is taken without
     * the queue having to wake a sleeping thread. One taker spins at a time ({@link #spinning}): the others sleep at
     * once, so an idle replica keeps at most one core looking, whatever its predictor count. Polling an empty queue
     * reads one atomic count, no lock.
     */
    InputTask<I, O> take(long spinNanos) throws InterruptedException {
        if (spinNanos > 0 && spinning.compareAndSet(false, true)) {
            try {
                long until = System.nanoTime() + spinNanos;
                do {
                    InputTask<I, O> task = tasks.poll();
                    if (task != null) {
                        return task;
                    }
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                    Thread.yield();
                } while (System.nanoTime() - until < 0);
            } finally {
                spinning.set(false);
            }
        }
        return tasks.take();
    }

    /** The next task, or null when none is queued. */
    InputTask<I, O> poll() {
        return tasks.poll();
    }

    /** The next task, waiting up to {@code nanos} for one; null when none came. */
    InputTask<I, O> poll(long nanos) throws InterruptedException {
        return tasks.poll(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Claims {@code task} and gives back its place; false when its request already ended (failed or cancelled: its
     * place was given back then, and it has no input left to run).
     */
    boolean claim(InputTask<I, O> task) {
        if (!task.request().claimTask()) {
            return false;
        }
        queued.release();
        return !task.request().isDone();
    }

    /** Queues {@code count} stop signals, behind every task queued so far. */
    void addStops(int count) {
        for (int i = 0; i < count; i++) {
            tasks.add(InputTask.stop());
        }
    }

    /** Fails every request that still has a task queued with {@link NotReady} carrying {@code reason}. */
    void failAll(String reason) {
        InputTask<I, O> task;
        while ((task = tasks.poll()) != null) {
            if (!task.isStop() && task.request().claimTask()) {
                queued.release();
                task.request().fail(new NotReady(reason));
            }
        }
    }

    /** Inputs admitted and not yet claimed by a predictor. */
    int queuedInputs() {
        return queued.count();
    }
}
