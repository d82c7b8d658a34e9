package dev.serval.deployment;

import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.predictor.Model;
import dev.serval.predictor.ModelSignature;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.function.LongSupplier;

/**
 * One served model: loads it in the background, warms every predictor up, then serves requests through a
 * bounded {@link PredictorPool} until closed.
 *
 * <p>Design. States: {@code LOADING -> READY -> STOPPED}, or {@code LOADING -> FAILED}; the transitions are
 * made by the loader thread (to READY or FAILED) and by the closing thread (to STOPPED), and {@link #state} is
 * volatile so that request threads read it without locks. {@link #pool} and {@link #signature} are written
 * once by the loader thread before {@link #state} becomes READY and only read after a READY read, which
 * orders them. {@link #submit} never blocks: it validates, then hands the inputs to the pool or refuses.
 */
public final class Deployment<I, O> implements AutoCloseable {

    /** Where a deployment is in its life. Only READY serves. */
    public enum State {
        LOADING, READY, FAILED, STOPPED
    }

    private static final System.Logger LOG = System.getLogger(Deployment.class.getName());

    private final DeploymentSpec spec;
    private final ThreadFactory threads;
    private final LongSupplier nanoTime;
    private volatile State state = State.LOADING;
    private volatile String failure;
    private volatile Model<I, O> model;
    private volatile PredictorPool<I, O> pool;

    private Deployment(DeploymentSpec spec, ThreadFactory threads, LongSupplier nanoTime) {
        this.spec = spec;
        this.threads = threads;
        this.nanoTime = nanoTime;
    }

    /**
     * Starts loading on a new thread from {@code threads} and returns at once, in state LOADING.
     *
     * @param threads  makes the loader and the predictor threads (platform threads: they run native code)
     * @param nanoTime the clock for service-time estimates
     */
    public static <I, O> Deployment<I, O> start(
            DeploymentSpec spec, ModelLoader<I, O> loader, ThreadFactory threads, LongSupplier nanoTime) {
        Deployment<I, O> deployment = new Deployment<>(spec, threads, nanoTime);
        threads.newThread(() -> deployment.load(loader)).start();
        return deployment;
    }

    /** {@link #start} with named daemon platform threads and {@link System#nanoTime}. */
    public static <I, O> Deployment<I, O> start(DeploymentSpec spec, ModelLoader<I, O> loader) {
        ThreadFactory threads = Thread.ofPlatform().name("serval-" + spec.name() + "-", 0).daemon(true).factory();
        return start(spec, loader, threads, System::nanoTime);
    }

    private void load(ModelLoader<I, O> loader) {
        long start = nanoTime.getAsLong();
        Model<I, O> loaded = null;
        PredictorPool<I, O> started = null;
        try {
            loaded = loader.load();
            started = new PredictorPool<>(spec, loaded, threads, nanoTime);
            started.start();
            started.awaitWarmUp();
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "model '" + spec.name() + "' failed to load", t);
            if (started != null) {
                started.close(Duration.ZERO);
            }
            if (loaded != null) {
                loaded.close();
            }
            synchronized (this) {
                failure = String.valueOf(t.getMessage());
                if (state != State.STOPPED) {
                    state = State.FAILED;
                }
            }
            return;
        }
        synchronized (this) {
            if (state == State.STOPPED) {
                started.close(Duration.ZERO);
                loaded.close();
                return;
            }
            model = loaded;
            pool = started;
            state = State.READY;
        }
        LOG.log(System.Logger.Level.INFO, "model ''{0}'' ready: {1} predictor threads warmed up in {2} ms",
                spec.name(), spec.predictorThreads(), (nanoTime.getAsLong() - start) / 1_000_000);
    }

    public String name() {
        return spec.name();
    }

    public DeploymentSpec spec() {
        return spec;
    }

    public State state() {
        return state;
    }

    /** Why loading failed, when {@link #state()} is FAILED. */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /** What the model takes and returns, once loaded. */
    public Optional<ModelSignature> signature() {
        Model<I, O> loaded = model;
        return loaded == null ? Optional.empty() : Optional.of(loaded.signature());
    }

    /** Inputs admitted and waiting for a predictor (0 unless READY). */
    public int queuedInputs() {
        PredictorPool<I, O> current = pool;
        return current == null ? 0 : current.queuedInputs();
    }

    /**
     * Validates the inputs and queues them, all or none. Never blocks.
     *
     * @return completed (on a predictor thread) with one output per input, in order; exceptionally with
     *     {@code InferenceFailed} or {@code NotReady} if the model fails or the deployment shuts down first.
     *     Cancelling it skips the inputs no predictor has started yet.
     * @throws InvalidInput when the request is empty, too large, or holds an input the model cannot take
     * @throws NotReady     when the deployment is not READY
     * @throws dev.serval.error.Overloaded when the queue cannot take all the inputs
     */
    public CompletableFuture<List<O>> submit(List<I> inputs) {
        PredictorPool<I, O> current = readyPool();
        if (inputs.isEmpty()) {
            throw new InvalidInput("the request holds no inputs");
        }
        if (inputs.size() > spec.maxInputsPerRequest()) {
            throw new InvalidInput("the request holds " + inputs.size() + " inputs; model '" + spec.name()
                    + "' takes at most " + spec.maxInputsPerRequest() + " per request");
        }
        Model<I, O> loaded = model;
        for (int i = 0; i < inputs.size(); i++) {
            loaded.validate(inputs.get(i), i);
        }
        return current.submit(inputs);
    }

    private PredictorPool<I, O> readyPool() {
        return switch (state) {
            case READY -> pool;
            case LOADING -> throw new NotReady("model '" + spec.name() + "' is still loading");
            case FAILED -> throw new NotReady("model '" + spec.name() + "' failed to load: " + failure);
            case STOPPED -> throw new NotReady("model '" + spec.name() + "' is shutting down");
        };
    }

    /**
     * Stops admitting requests, lets queued and running work finish for up to the spec's drain timeout, then
     * releases the predictors and the model. Blocks the calling thread (a shutdown thread) while draining.
     */
    @Override
    public void close() {
        PredictorPool<I, O> current;
        Model<I, O> loaded;
        synchronized (this) {
            if (state == State.STOPPED) {
                return;
            }
            current = pool;
            loaded = model;
            state = State.STOPPED;
        }
        if (current != null) {
            current.close(spec.drainTimeout());
        }
        if (loaded != null) {
            loaded.close();
        }
    }
}
