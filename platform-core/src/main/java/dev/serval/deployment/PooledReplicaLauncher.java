package dev.serval.deployment;

import dev.serval.controller.ReplicaEvents;
import dev.serval.controller.ReplicaLauncher;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.Model;
import dev.serval.replica.Replica;
import dev.serval.replica.ReplicaRecord;
import dev.serval.spec.DeploymentSpec;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Starts and stops one deployment's {@link Replica}s on launcher threads: a replica takes a reference on the shared
 * model of its version, starts its predictor threads, warms up, and runs its health probe every period; stopping it
 * drains its admitted requests (up to the timeout), then closes its predictors and releases the model: closing it
 * when this was the last reference and every predictor thread exited, leaving it open for good when one is stuck in it.
 *
 * <p>Threads: {@link #start} and {@link #stop} are called on the controller thread and only queue work; the work
 * runs on {@code work} threads. A {@link ReplicaHandle} per replica (in {@link #handles} from its start until it
 * stopped or its start failed) holds what stopping it needs and records whether a stop arrived while the replica
 * was still starting; its monitor is held only for those two field updates.
 *
 * <p>A stop that arrives while the replica is still starting (its model loading, its predictors warming up) is
 * reported {@code stopped} at once: the replica never served, so there is nothing to drain, and a deployment being
 * deleted must not wait for a load that may take minutes. The start goes on in the background; when it finishes,
 * whatever it obtained (the model reference, the predictor threads) is released without any report, so a model that
 * finishes loading after its deployment was removed is closed and discarded (with its last reference). Until then
 * it holds its memory: that is the price of answering the delete at once.
 */
final class PooledReplicaLauncher<I, O> implements ReplicaLauncher<I, O> {

    private static final System.Logger LOG = System.getLogger(PooledReplicaLauncher.class.getName());
    private static final Duration IDLE_STOP_GRACE = Duration.ofSeconds(5);

    private final ModelLoader<I, O> loader;
    private final SharedModels<I, O> models = new SharedModels<>();
    private final Executor work;
    private final ScheduledExecutorService health;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    private final ConcurrentHashMap<Long, ReplicaHandle<I, O>> handles = new ConcurrentHashMap<>();
    /** How long the last replica took to start (model load and warm-up), or 0 before the first; best-effort. */
    private volatile long lastStartNanos;

    PooledReplicaLauncher(ModelLoader<I, O> loader, Executor work, ScheduledExecutorService health,
            LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.loader = loader;
        this.metrics = metrics;
        this.work = work;
        this.health = health;
        this.nanoTime = nanoTime;
    }

    /** How long the last replica took to start, from its start to its first warmed-up inference; 0 before one did. */
    long lastStartNanos() {
        return lastStartNanos;
    }

    @Override
    public void start(DeploymentSpec spec, ReplicaRecord record, ReplicaEvents<I, O> events) {
        ReplicaHandle<I, O> handle = new ReplicaHandle<>(SharedModels.key(spec, loader, record.id()), record.name());
        handles.put(record.id(), handle);
        work.execute(() -> startNow(spec, record, handle, events));
    }

    private void startNow(DeploymentSpec spec, ReplicaRecord record, ReplicaHandle<I, O> handle,
            ReplicaEvents<I, O> events) {
        long id = record.id();
        long begin = nanoTime.getAsLong();
        Model<I, O> model = null;
        Replica<I, O> replica;
        try {
            model = models.acquire(handle.model, spec, loader, metrics);
            if (abandoned(handle)) {
                LOG.log(System.Logger.Level.INFO, "replica {0} was stopped while its model loaded; releasing the model",
                        record.name());
                models.release(handle.model);
                handles.remove(id, handle);
                return;
            }
            replica = Replica.start(spec, id, model,
                    Thread.ofPlatform().daemon(true).name("serval-" + spec.name() + "-r" + id + "-", 0).factory(),
                    nanoTime, metrics, reason -> {
                        metrics.replicaUnhealthy();
                        report(record.name(), () -> events.failed(id, reason));
                    });
        } catch (Throwable t) {
            metrics.replicaStartFailed();
            if (model != null) {
                if (stuck(t)) {
                    models.releaseLeaked(handle.model, record.name());
                } else {
                    models.release(handle.model);
                }
            }
            handles.remove(id, handle);
            if (abandoned(handle)) {
                LOG.log(System.Logger.Level.INFO, "replica " + record.name() + ", stopped while starting, failed to start"
                        + " (already reported stopped)", t);
            } else {
                LOG.log(System.Logger.Level.ERROR, "replica " + record.name() + " failed to start", t);
                String reason = String.valueOf(t.getMessage());
                report(record.name(), () -> events.failed(id, reason));
            }
            return;
        }
        lastStartNanos = nanoTime.getAsLong() - begin;
        metrics.replicaStarted(lastStartNanos);
        handle.inFlightGauge = metrics.replicaInFlight(id, replica::inFlight);
        long period = spec.health().healthCheckPeriod().toNanos();
        handle.healthCheck = health.scheduleAtFixedRate(replica::probe, period, period, TimeUnit.NANOSECONDS);
        boolean stopRequested;
        synchronized (handle) {
            stopRequested = handle.stopRequested;
            handle.replica = replica;
        }
        if (stopRequested) {
            stopNow(id, handle, Duration.ZERO, null); // reported stopped when the stop arrived
            return;
        }
        try {
            events.started(id, replica);
        } catch (RejectedExecutionException e) {
            stopNow(id, handle, Duration.ZERO, events); // the engine closed while it started: nobody will stop it
        }
    }

    /** Whether a stop arrived while the replica was starting (and was reported at once). */
    private static boolean abandoned(ReplicaHandle<?, ?> handle) {
        synchronized (handle) {
            return handle.stopRequested;
        }
    }

    @Override
    public void stop(ReplicaRecord record, Duration drain, ReplicaEvents<I, O> events) {
        ReplicaHandle<I, O> handle = handles.get(record.id());
        if (handle == null) {
            report(record.name(), () -> events.stopped(record.id())); // its start already failed and cleaned up
            return;
        }
        boolean started;
        synchronized (handle) {
            started = handle.replica != null;
            if (!started) {
                handle.stopRequested = true;
            }
        }
        if (started) {
            work.execute(() -> stopNow(record.id(), handle, drain, events));
        } else {
            events.stopped(record.id()); // never served: nothing to drain; its start cleans up when it finishes
        }
    }

    /** Drains and closes a started replica; reports {@code stopped} to {@code events} unless it is null. */
    private void stopNow(long id, ReplicaHandle<I, O> handle, Duration drain, ReplicaEvents<I, O> events) {
        boolean exited = false; // until the replica says so: the model stays open if anything goes wrong first
        try {
            ScheduledFuture<?> check = handle.healthCheck;
            if (check != null) {
                check.cancel(false);
            }
            handle.replica.stopAccepting();
            boolean idle = handle.replica.awaitIdle(drain);
            if (!idle) {
                LOG.log(System.Logger.Level.WARNING, "replica {0} still had requests after its {1} drain; failing them",
                        id, drain);
            }
            // Idle: the predictor threads only have to take their stop signal, give them a moment to.
            exited = handle.replica.close(idle ? IDLE_STOP_GRACE : Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exited = handle.replica.close(Duration.ZERO);
        } finally {
            if (handle.inFlightGauge != null) {
                metrics.remove(handle.inFlightGauge);
            }
            // The model is closed only once no thread of this replica can be inside it.
            if (exited) {
                models.release(handle.model);
            } else {
                models.releaseLeaked(handle.model, handle.name);
            }
            handles.remove(id, handle);
            if (events != null) {
                report(handle.name, () -> events.stopped(id));
            }
        }
    }

    /** Sends a report to the controller; after the engine closed there is no one left to tell, which is fine. */
    private static void report(String replica, Runnable report) {
        try {
            report.run();
        } catch (RejectedExecutionException e) {
            LOG.log(System.Logger.Level.DEBUG, "replica {0}: the controller is closed; report dropped", replica);
        }
    }

    /** Whether a start failure says a predictor thread of the failed replica is still inside the model. */
    private static boolean stuck(Throwable failure) {
        for (Throwable suppressed : failure.getSuppressed()) {
            if (suppressed instanceof Replica.PredictorsStuck) {
                return true;
            }
        }
        return false;
    }

    /**
     * The launcher's hold on one replica, from its start until it stopped: the shared-model key it took a reference
     * on, its name, and once started the replica itself with its health check and in-flight gauge.
     */
    private static final class ReplicaHandle<I, O> {
        /** The {@link SharedModels} key of the model it holds a reference on. */
        final SharedModels.Key model;
        final String name;
        /** Set once the replica started; guarded by the handle's monitor. */
        Replica<I, O> replica;
        /** A stop arrived before the replica started, and was reported; guarded by the handle's monitor. */
        boolean stopRequested;
        volatile ScheduledFuture<?> healthCheck;
        volatile io.micrometer.core.instrument.Meter inFlightGauge;

        ReplicaHandle(SharedModels.Key model, String name) {
            this.model = model;
            this.name = name;
        }
    }
}
