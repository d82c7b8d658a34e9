package dev.serval.replica;

import dev.serval.admission.BoundedCount;
import dev.serval.admission.RetryAfter;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The inputs waiting for a replica's predictors, with a hard bound on how many: admission to a {@link PredictorPool}.
 *
 * <p>Design. {@link #waiting} holds one {@link Waiting} per admitted request with inputs not yet taken; {@link #stops}
 * counts the stop signals given, each taken by one predictor once nothing is queued, so that shutting down finishes
 * every input admitted before (a request taking turns goes back to the queue's tail, which a stop signal queued behind
 * it would otherwise overtake); {@link #queued} is a {@link BoundedCount} of the inputs admitted and not yet claimed,
 * bounded by {@code max_queued_inputs}. Callers (request threads, the health checker) {@link #admit}: the count is
 * taken for all of a request's inputs at once, by CAS, before anything is queued, so a request whose inputs do not all
 * fit is refused whole with {@link Overloaded} and its {@link RetryAfter} estimate. Predictors take tasks and
 * {@link #claim} them, which gives back the place; a request that ends early gives back the places of its unclaimed tasks
 * itself (see {@link PoolRequest}), and the tasks it leaves behind are skipped by the claim. The closing thread adds
 * stop signals and fails what is left ({@link #failAll}).
 *
 * <p>Fairness. Requests take turns, one input each: a predictor takes the next input of the request at the head of
 * {@link #waiting} and, when that request has more, puts it back at the tail (round robin, as a fair queue serves
 * flows). A one-text request queued behind a request of 2,048 texts waits for one input of it per turn, not for all of
 * them, so one client's large requests cannot hold everyone else's small ones; a request's own inputs still run in
 * order, and which inputs share a batch never changes an answer (batch invariance). A {@link Waiting} is either in the
 * queue or held by the one predictor that took it out, which alone moves its cursor before putting it back (the
 * queue's offer publishes the write to whoever polls it next).
 *
 * <p>Waiting. A predictor that finds no task may spin for a while ({@link #take(long)}; one at a time, the
 * {@link #spinning} flag, taken by CAS and given back by the predictor that took it), then sleeps: it registers in
 * {@link #sleepers}, looks once more, and parks. Whoever queues tasks wakes that many sleepers, one fewer while a
 * predictor spins (it takes one itself), and a predictor that takes a task and sees more queued wakes one more. Both
 * sides publish first and look second (task then flag or sleepers; flag or registration then tasks, a full fence
 * between), so of a task and a sleeper, or a task and a spinner that stops, at least one sees the other: no task is
 * left queued while every predictor sleeps. A sleeper woken for a task another predictor took looks again and
 * sleeps again. Nothing locks; {@link #queuedInputs()} is a best-effort read.
 */
final class InputQueue<I, O> {

    private final String deployment;
    private final ConcurrentLinkedQueue<Waiting<I, O>> waiting = new ConcurrentLinkedQueue<>();
    /** Predictors parked until a task is queued; each removes itself when it wakes. */
    private final ConcurrentLinkedQueue<Thread> sleepers;
    private final BoundedCount queued;
    private final RetryAfter retryAfter;
    /** Stop signals given and not yet taken ({@link #addStops}). */
    private final AtomicInteger stops = new AtomicInteger();
    /** Whether a predictor is spinning now ({@link #take(long)}). */
    private final AtomicBoolean spinning = new AtomicBoolean();

    /**
     * @param deployment      the deployment's name, for refusals
     * @param maxQueuedInputs inputs admitted and not yet claimed, at most
     * @param retryAfter      the estimate a refusal carries
     */
    InputQueue(String deployment, int maxQueuedInputs, RetryAfter retryAfter) {
        this(deployment, maxQueuedInputs, retryAfter, new ConcurrentLinkedQueue<>());
    }

    /** With {@code sleepers} given: a test's queue places a producer between a predictor's look and its sleep. */
    InputQueue(String deployment, int maxQueuedInputs, RetryAfter retryAfter, ConcurrentLinkedQueue<Thread> sleepers) {
        this.sleepers = sleepers;
        this.deployment = deployment;
        this.queued = new BoundedCount(maxQueuedInputs);
        this.retryAfter = retryAfter;
    }

    /**
     * Queues every input of one request, or none of them.
     *
     * @param deadlineNanos until when the request may run ({@code CallContext.NO_DEADLINE} for ever)
     * @param nowNanos      when they are queued
     * @throws Overloaded when the queue cannot take all the inputs
     */
    PoolRequest<I, O> admit(List<I> inputs, long deadlineNanos, long nowNanos) {
        return admit(inputs, deadlineNanos, nowNanos, 0);
    }

    /**
     * {@link #admit(List, long, long)} for a request whose inputs' tokens are counted against {@code tokenBudget}
     * ({@code max_tokens_per_request}; 0: not counted, see {@link PoolRequest#charge}).
     */
    PoolRequest<I, O> admit(List<I> inputs, long deadlineNanos, long nowNanos, long tokenBudget) {
        int n = inputs.size();
        if (!queued.tryAcquire(n)) {
            int current = queued.count();
            throw new Overloaded("model '" + deployment + "' is overloaded: " + current + " inputs queued, "
                    + n + " more would exceed max-queued-inputs " + queued.limit(), retryAfter.estimate(current));
        }
        PoolRequest<I, O> request = new PoolRequest<>(inputs, queued, deadlineNanos, tokenBudget);
        waiting.add(new Waiting<>(request, n, nowNanos));
        wake(n);
        return request;
    }

    /**
     * The next input to run: of the request at the head of the queue, which goes back to the tail while it has more;
     * once nothing is queued, a stop signal if one was given; else null.
     */
    private InputTask<I, O> next() {
        Waiting<I, O> head = waiting.poll();
        if (head == null) {
            return takeStop();
        }
        int index = head.next++;
        if (head.next < head.size) {
            waiting.add(head); // its next input after one of every other request's
        }
        return new InputTask<>(head.request, index, head.queuedAt);
    }

    /**
     * The next task, waiting for one: looked for during {@code spinNanos} of wall time by one predictor at a time, the
     * core given to any other runnable thread between looks ({@link Thread#yield}), else asleep. A task queued during
     * the spin is taken without waking a sleeping thread; the other predictors sleep at once, so an idle replica keeps
     * at most one core looking.
     */
    InputTask<I, O> take(long spinNanos) throws InterruptedException {
        boolean spun = false;
        for (;;) {
            InputTask<I, O> task = next();
            if (task != null) {
                return taken(task);
            }
            if (!spun && spinNanos > 0 && spinning.compareAndSet(false, true)) {
                spun = true;
                task = spin(spinNanos);
                if (task != null) {
                    return taken(task);
                }
                continue; // the spin is over: look once more (a task queued as it ended woke nobody), then sleep
            }
            task = sleep(0);
            if (task != null) {
                return taken(task);
            }
        }
    }

    /** The next task, or null when none is queued. */
    InputTask<I, O> poll() {
        InputTask<I, O> task = next();
        return task == null ? null : taken(task);
    }

    /** The next task, waiting asleep up to {@code nanos} for one; null when none came. */
    InputTask<I, O> poll(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        for (;;) {
            InputTask<I, O> task = next();
            if (task != null) {
                return taken(task);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            task = sleep(left);
            if (task != null) {
                return taken(task);
            }
        }
    }

    /**
     * Polls until a task comes or {@code spinNanos} pass, holding {@link #spinning}; gives it back before returning,
     * and fences so that a task queued by someone who still saw it held is seen by the caller's next look.
     */
    private InputTask<I, O> spin(long spinNanos) throws InterruptedException {
        try {
            long until = System.nanoTime() + spinNanos;
            do {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                Thread.yield();
                InputTask<I, O> task = next();
                if (task != null) {
                    return task;
                }
            } while (System.nanoTime() - until < 0);
            return null;
        } finally {
            spinning.set(false);
            VarHandle.fullFence();
        }
    }

    /**
     * Sleeps until woken for a task, or for up to {@code nanos} when positive: registers, looks once more (a task
     * queued before the registration woke nobody), then parks.
     *
     * @return the task found on that last look, or null once woken (the caller looks again)
     */
    private InputTask<I, O> sleep(long nanos) throws InterruptedException {
        Thread self = Thread.currentThread();
        sleepers.add(self);
        try {
            VarHandle.fullFence();
            InputTask<I, O> task = next();
            if (task != null) {
                return task;
            }
            if (nanos > 0) {
                LockSupport.parkNanos(this, nanos);
            } else {
                LockSupport.park(this);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return null;
        } finally {
            sleepers.remove(self); // gone already when a producer woke it
        }
    }

    /** A stop signal, taking one of {@link #stops}; null when none is left. */
    private InputTask<I, O> takeStop() {
        for (int left = stops.get(); left > 0; left = stops.get()) {
            if (stops.compareAndSet(left, left - 1)) {
                return InputTask.stop();
            }
        }
        return null;
    }

    /** {@code task}, after waking one more sleeper when tasks are still queued behind it. */
    private InputTask<I, O> taken(InputTask<I, O> task) {
        if (!waiting.isEmpty()) {
            wakeOne();
        }
        return task;
    }

    /** Wakes a sleeper for each of {@code count} tasks just queued, but one when a predictor spins. */
    private void wake(int count) {
        VarHandle.fullFence();
        int wakes = spinning.get() ? count - 1 : count;
        for (int i = 0; i < wakes; i++) {
            if (!wakeOne()) {
                return;
            }
        }
    }

    /** Wakes one sleeper; false when none sleeps. */
    private boolean wakeOne() {
        Thread sleeper = sleepers.poll();
        if (sleeper == null) {
            return false;
        }
        LockSupport.unpark(sleeper);
        return true;
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

    /** Gives {@code count} stop signals, taken after every input queued so far (and any queued after). */
    void addStops(int count) {
        stops.addAndGet(count);
        wake(count);
    }

    /** Fails every request that still has a task queued with {@link NotReady} carrying {@code reason}. */
    void failAll(String reason) {
        Waiting<I, O> left;
        while ((left = waiting.poll()) != null) {
            for (; left.next < left.size; left.next++) {
                if (left.request.claimTask()) {
                    queued.release();
                    left.request.fail(new NotReady(reason));
                }
            }
        }
    }

    /** Inputs admitted and not yet claimed by a predictor. */
    int queuedInputs() {
        return queued.count();
    }

    /**
     * One request's inputs not yet taken, from {@link #next} on. {@link #next} is written only by the predictor that
     * took this out of the queue, before it puts it back.
     */
    private static final class Waiting<I, O> {
        final PoolRequest<I, O> request;
        final int size;
        final long queuedAt;
        int next;

        Waiting(PoolRequest<I, O> request, int size, long queuedAt) {
            this.request = request;
            this.size = size;
            this.queuedAt = queuedAt;
        }
    }
}
