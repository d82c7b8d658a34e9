package dev.serval.controller;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The controller thread: runs submitted tasks (replica reports, spec changes) one at a time, and after each task,
 * and at least every tick period, runs {@link Controller#tick()}. It never dies of a failing task: the failure is
 * logged with its context and the loop goes on.
 *
 * <p>Design. Every task is either run or refused, never dropped, so that no caller waits for a task that will not
 * run. {@link #accepting} is written once, by {@link #close}; {@link #execute} reads it before and after queueing.
 * A task queued before close runs: the loop drains {@link #tasks} before it ends. A task whose queueing raced with
 * close is taken back out by its caller and refused ({@link RejectedExecutionException}) unless the loop already took
 * it (then it runs): {@code remove} and the loop's {@code poll} decide which, exactly once. Should the loop thread not
 * end within {@link #CLOSE_WAIT} (a task that hangs), the futures of tasks still queued ({@link #submit}) are failed.
 * {@link #controller} is written once before the thread starts; the queue is the only other shared state.
 */
public final class ControllerLoop implements Executor, AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ControllerLoop.class.getName());
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    /** Wakes the loop from its poll at close; runs nothing. */
    private static final Runnable WAKE = () -> { };

    private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
    private final long tickNanos;
    private final Thread thread;
    private volatile Controller controller;
    private volatile boolean accepting = true;

    public ControllerLoop(Duration tickPeriod, ThreadFactory threads) {
        this.tickNanos = tickPeriod.toNanos();
        this.thread = threads.newThread(this::loop);
    }

    /** Starts the loop over {@code controller}, which must have been built with this loop as its executor. */
    public void start(Controller controller) {
        this.controller = controller;
        thread.start();
    }

    /**
     * Runs {@code task} on the controller thread, after the tasks submitted before it.
     *
     * @throws RejectedExecutionException when the loop is closed or closing: the task will never run
     */
    @Override
    public void execute(Runnable task) {
        if (!accepting) {
            throw refused();
        }
        tasks.add(task);
        if (!accepting && tasks.remove(task)) {
            throw refused(); // close began meanwhile and the loop may have drained already: take it back
        }
    }

    /**
     * Runs {@code task} on the controller thread, like {@link #execute}, and says when it ran.
     *
     * @return completed once the task ran; exceptionally with what it threw, or with
     *     {@link RejectedExecutionException} when the loop refused it (closed) or stopped without running it
     */
    public CompletableFuture<Void> submit(Runnable task) {
        Submitted submitted = new Submitted(task);
        try {
            execute(submitted);
        } catch (RejectedExecutionException e) {
            submitted.done.completeExceptionally(e);
        }
        return submitted.done;
    }

    /** Whether the caller is the controller thread. */
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    private void loop() {
        while (accepting) {
            Runnable task;
            try {
                task = tasks.poll(tickNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                continue; // only close ends the loop, and it does so through accepting
            }
            runThenTick(task);
        }
        Runnable task;
        while ((task = tasks.poll()) != null) { // accepted before close: run, never drop
            runThenTick(task);
        }
    }

    private void runThenTick(Runnable task) {
        try {
            if (task != null && task != WAKE) {
                task.run();
            }
            controller.tick();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "controller task failed; the controller goes on", t);
        }
    }

    /**
     * Refuses new tasks, runs the ones already queued, then stops the loop. Waits up to ten seconds for it; if it
     * does not stop (a task hangs), fails the futures of tasks still queued and logs how many plain tasks are left.
     */
    @Override
    public void close() {
        accepting = false;
        tasks.add(WAKE);
        try {
            thread.join(CLOSE_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!thread.isAlive()) {
            return;
        }
        int dropped = 0;
        Runnable task;
        while ((task = tasks.poll()) != null) {
            if (task instanceof Submitted submitted) {
                submitted.done.completeExceptionally(new RejectedExecutionException(
                        "the controller did not stop within " + CLOSE_WAIT + " and never ran this task"));
            } else if (task != WAKE) {
                dropped++;
            }
        }
        LOG.log(System.Logger.Level.WARNING, "controller thread still busy {0} after close; {1} queued reports dropped",
                CLOSE_WAIT, dropped);
    }

    private static RejectedExecutionException refused() {
        return new RejectedExecutionException("the controller is closed");
    }

    /** A task whose caller waits for it. */
    private static final class Submitted implements Runnable {
        final Runnable task;
        final CompletableFuture<Void> done = new CompletableFuture<>();

        Submitted(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            try {
                task.run();
                done.complete(null);
            } catch (RuntimeException | Error e) {
                done.completeExceptionally(e);
                throw e; // the loop logs it
            }
        }
    }
}
