package dev.serval.controller;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The controller thread: runs submitted tasks (replica reports, spec changes) one at a time, and after each task,
 * and at least every tick period, runs {@link Controller#tick()}. It never dies of a failing task: the failure is
 * logged with its context and the loop goes on.
 */
public final class ControllerLoop implements Executor, AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ControllerLoop.class.getName());

    private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
    private final long tickNanos;
    private final Thread thread;
    private volatile Controller controller;
    private volatile boolean running = true;

    public ControllerLoop(Duration tickPeriod, ThreadFactory threads) {
        this.tickNanos = tickPeriod.toNanos();
        this.thread = threads.newThread(this::loop);
    }

    /** Starts the loop over {@code controller}, which must have been built with this loop as its executor. */
    public void start(Controller controller) {
        this.controller = controller;
        thread.start();
    }

    /** Runs {@code task} on the controller thread, after the tasks submitted before it. */
    @Override
    public void execute(Runnable task) {
        tasks.add(task);
    }

    /** Whether the caller is the controller thread. */
    public boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    private void loop() {
        while (running) {
            Runnable task;
            try {
                task = tasks.poll(tickNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                if (!running) {
                    return;
                }
                continue;
            }
            try {
                if (task != null) {
                    task.run();
                }
                controller.tick();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "controller task failed; the controller goes on", t);
            }
        }
    }

    /** Stops the loop after the task in progress; queued tasks are dropped. */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
