package dev.serval.deployment;

import dev.serval.autoscaling.Autoscaler;
import dev.serval.cache.CacheBudget;
import dev.serval.cache.DeploymentCache;
import dev.serval.controller.Controller;
import dev.serval.controller.ControllerLoop;
import dev.serval.health.FailureMonitor;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.Model;
import dev.serval.model.ModelCatalog;
import dev.serval.model.ModelKind;
import dev.serval.model.NativeRuntime;
import dev.serval.request.TensorIO;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.InvalidSpec;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;

/**
 * Serval's serving engine: one controller thread reconciling every deployment, launcher threads that start and stop
 * replicas, and one health-check thread that runs each replica's probe. Create one per process.
 */
public final class ServingEngine implements AutoCloseable {

    private final LongSupplier nanoTime;
    private final MeterRegistry registry;
    private final java.time.InstantSource wallClock;
    private final ControllerLoop loop;
    private final Controller controller;
    private final ExecutorService launchers;
    private final ScheduledExecutorService health;
    private final List<Deployment<?, ?>> deployments = new ArrayList<>();
    private final FailureMonitor monitor;
    private final Autoscaler autoscaler;
    private final ScheduledExecutorService autoscaling;
    private final EngineSettings settings;
    private final CacheBudget cacheBudget;

    /** The threads deployments share. */
    record Threads(ExecutorService launchers, ScheduledExecutorService health) {
    }

    /**
     * @param tickPeriod how often the controller reconciles when no event wakes it (back-off retries)
     * @param nanoTime   the clock
     * @param wallClock  timestamps of recent errors
     * @param registry   where the engine's meters go
     */
    public ServingEngine(Duration tickPeriod, LongSupplier nanoTime, java.time.InstantSource wallClock,
            MeterRegistry registry, FailureMonitor.Settings failureMonitor) {
        this(tickPeriod, nanoTime, wallClock, registry, failureMonitor, DEFAULT_AUTOSCALING_PERIOD,
                Runtime.getRuntime().availableProcessors());
    }

    /**
     * @param tickPeriod        how often the controller reconciles when no event wakes it (back-off retries)
     * @param nanoTime          the clock
     * @param wallClock         timestamps of recent errors and autoscaling decisions
     * @param registry          where the engine's meters go
     * @param autoscalingPeriod how often the autoscaler samples and decides ({@code serval.autoscaling.period})
     * @param cpuBudget         threads the replicas of every deployment may run together ({@code serval.cpu-budget})
     */
    public ServingEngine(Duration tickPeriod, LongSupplier nanoTime, java.time.InstantSource wallClock,
            MeterRegistry registry, FailureMonitor.Settings failureMonitor, Duration autoscalingPeriod, int cpuBudget) {
        this(tickPeriod, nanoTime, wallClock, registry, settings(failureMonitor, autoscalingPeriod, cpuBudget));
    }

    /**
     * The engine of a server: a one-second tick, {@link System#nanoTime} and the system's wall clock, run by
     * {@code settings} (the server's {@code serval.*} properties, bounds checked).
     */
    public ServingEngine(EngineSettings settings, MeterRegistry registry) {
        this(Duration.ofSeconds(1), System::nanoTime, java.time.InstantSource.system(), registry, settings);
    }

    /** A server's engine, from its {@code serval.*} settings (each defaulted until set): {@link Builder#start}. */
    public static Builder builder(MeterRegistry registry) {
        return new Builder(registry);
    }

    /**
     * The server's settings for its engine, one section at a time, each a {@code serval.*} property; {@link #start}
     * checks their bounds once ({@link EngineSettings}) and starts the engine of a server (see
     * {@link #ServingEngine(EngineSettings, MeterRegistry)}). Not thread-safe: one caller builds.
     */
    public static final class Builder {

        private static final EngineSettings DEFAULTS = EngineSettings.defaults();

        private final MeterRegistry registry;
        private Duration autoscalingPeriod = DEFAULTS.autoscalingPeriod();
        private int cpuBudget = DEFAULTS.cpuBudget();
        private boolean failureMonitorEnabled = DEFAULTS.failureMonitorEnabled();
        private Duration failureWindow = DEFAULTS.failureWindow();
        private double failureThreshold = DEFAULTS.failureThreshold();
        private int failureMinRequests = DEFAULTS.failureMinRequests();
        private int maxReplacements = DEFAULTS.maxReplacements();
        private Duration multiplexRefreshPeriod = DEFAULTS.multiplexRefreshPeriod();
        private Duration multiplexMinResidency = DEFAULTS.multiplexMinResidency();
        private int multiplexResidencyFactor = DEFAULTS.multiplexResidencyFactor();
        private long cacheMaxBytes = DEFAULTS.cacheMaxBytes();

        private Builder(MeterRegistry registry) {
            this.registry = registry;
        }

        /** {@code serval.autoscaling.period} and {@code serval.cpu-budget}. */
        public Builder autoscaling(Duration period, int cpuBudget) {
            this.autoscalingPeriod = period;
            this.cpuBudget = cpuBudget;
            return this;
        }

        /** {@code serval.failure-monitor.*}. */
        public Builder failureMonitor(boolean enabled, Duration window, double threshold, int minRequests,
                int maxReplacements) {
            this.failureMonitorEnabled = enabled;
            this.failureWindow = window;
            this.failureThreshold = threshold;
            this.failureMinRequests = minRequests;
            this.maxReplacements = maxReplacements;
            return this;
        }

        /** {@code serval.multiplex.*}. */
        public Builder multiplex(Duration refreshPeriod, Duration minResidency, int residencyFactor) {
            this.multiplexRefreshPeriod = refreshPeriod;
            this.multiplexMinResidency = minResidency;
            this.multiplexResidencyFactor = residencyFactor;
            return this;
        }

        /** {@code serval.cache.max-bytes}. */
        public Builder cacheMaxBytes(long maxBytes) {
            this.cacheMaxBytes = maxBytes;
            return this;
        }

        /**
         * Checks every setting against its bounds and starts the engine.
         *
         * @throws InvalidSpec naming the property of the first setting out of its bounds; nothing started then
         */
        public ServingEngine start() {
            return new ServingEngine(settings(), registry);
        }

        /** The settings given, checked: what {@link #start} starts with. */
        EngineSettings settings() {
            return new EngineSettings(autoscalingPeriod, cpuBudget, failureMonitorEnabled, failureWindow,
                    failureThreshold, failureMinRequests, maxReplacements, multiplexRefreshPeriod,
                    multiplexMinResidency, multiplexResidencyFactor, cacheMaxBytes);
        }
    }

    private static EngineSettings settings(FailureMonitor.Settings monitor, Duration autoscalingPeriod, int cpuBudget) {
        EngineSettings defaults = EngineSettings.defaults();
        return new EngineSettings(autoscalingPeriod, cpuBudget, monitor.enabled(), monitor.window(),
                monitor.threshold(), monitor.minRequests(), monitor.maxReplacements(),
                defaults.multiplexRefreshPeriod(), defaults.multiplexMinResidency(),
                defaults.multiplexResidencyFactor());
    }

    private ServingEngine(Duration tickPeriod, LongSupplier nanoTime, java.time.InstantSource wallClock,
            MeterRegistry registry, EngineSettings settings) {
        this.settings = settings;
        this.cacheBudget = new CacheBudget(settings.cacheMaxBytes());
        FailureMonitor.Settings failureMonitor = settings.failureMonitor();
        Duration autoscalingPeriod = settings.autoscalingPeriod();
        int cpuBudget = settings.cpuBudget();
        this.nanoTime = nanoTime;
        this.wallClock = wallClock;
        this.registry = registry;
        this.loop = new ControllerLoop(tickPeriod, Thread.ofPlatform().name("serval-controller").daemon(true).factory());
        this.controller = new Controller(nanoTime, loop);
        this.launchers = Executors.newCachedThreadPool(Thread.ofPlatform().name("serval-launcher-", 0).daemon(true).factory());
        this.health = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("serval-health-check").daemon(true).factory());
        loop.start(controller);
        this.monitor = new FailureMonitor(failureMonitor, nanoTime,
                (name, reason) -> loop.execute(() -> replacedByMonitor(name, controller.replaceAll(name, reason))));
        if (failureMonitor.enabled()) {
            long every = failureMonitor.window().toNanos() / 10;
            health.scheduleAtFixedRate(this::evaluateFailures, every, every, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        this.autoscaler = new Autoscaler(autoscalingPeriod, cpuBudget, nanoTime, wallClock);
        this.autoscaling = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("serval-autoscaler").daemon(true).factory());
        long every = autoscalingPeriod.toNanos();
        autoscaling.scheduleAtFixedRate(autoscaler::tick, every, every, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** How often the autoscaler samples and decides unless told otherwise. */
    public static final Duration DEFAULT_AUTOSCALING_PERIOD = Duration.ofMillis(100);

    /** The autoscaler (its settings, for diagnostics). */
    public Autoscaler autoscaler() {
        return autoscaler;
    }

    private synchronized void replacedByMonitor(String name, int replicas) {
        for (Deployment<?, ?> deployment : deployments) {
            if (deployment.name().equals(name)) {
                deployment.metrics().replacedByFailureMonitor(replicas);
            }
        }
    }

    private void evaluateFailures() {
        try {
            monitor.evaluate();
        } catch (RuntimeException e) {
            System.getLogger(ServingEngine.class.getName()).log(System.Logger.Level.ERROR,
                    "failure monitor evaluation failed; it runs again next period", e);
        }
    }

    /** The failure monitor (liveness). */
    public FailureMonitor failureMonitor() {
        return monitor;
    }

    /**
     * Selects the ONNX Runtime native library ({@code serval.onnxruntime.library}: {@code packaged},
     * {@code onnxruntime-jar} or a library's path; see {@link ModelCatalog#selectNativeRuntime}), before any model loads: it is loaded once per process. Published as
     * {@code serval_onnxruntime_info{version, java_api}}.
     *
     * @throws InvalidSpec naming the property when the library cannot be selected
     */
    public static void selectNativeRuntime(String choice, MeterRegistry registry) {
        NativeRuntime runtime;
        try {
            runtime = ModelCatalog.selectNativeRuntime(choice);
        } catch (IOException | IllegalStateException e) {
            throw new InvalidSpec("serval.onnxruntime.library", e.getMessage());
        }
        Gauge.builder("serval.onnxruntime.info", () -> 1)
                .description("The ONNX Runtime this process runs (version) under ONNX Runtime Java (java_api)")
                .tags("version", runtime.version(), "java_api", runtime.javaApi())
                .register(registry);
    }

    /** The server-wide settings this engine runs with. */
    public EngineSettings settings() {
        return settings;
    }

    /**
     * False once the failure monitor gave up on this node (a deployment kept failing after its replicas were
     * replaced); the node's liveness.
     */
    public boolean live() {
        return monitor.live();
    }

    /** Why the failure monitor gave up on this node, or null while {@link #live()}. */
    public String notLiveReason() {
        return monitor.notLiveReason();
    }

    /** An engine whose meters go nowhere. */
    public ServingEngine(Duration tickPeriod, LongSupplier nanoTime) {
        this(tickPeriod, nanoTime, java.time.InstantSource.system(), new SimpleMeterRegistry(),
                FailureMonitor.Settings.defaults());
    }

    /** An engine with a one-second tick and {@link System#nanoTime}, whose meters go nowhere. */
    public ServingEngine() {
        this(Duration.ofSeconds(1), System::nanoTime);
    }

    /** Creates a deployment and starts its replicas in the background; returns at once. */
    public <I, O> Deployment<I, O> deploy(DeploymentSpec spec, ModelLoader<I, O> loader) {
        return deploy(spec, loader, null, false, false);
    }

    /**
     * {@link #deploy(DeploymentSpec, ModelLoader, TensorIO)} of a model of {@code kind}, whose requests' tensors map
     * as the kind's ({@link ModelKind#inputsBeforeLoad}); the results of a kind that caches ({@link #caches}) go
     * through a result cache as the spec's {@code cache} says.
     */
    public <I, O> Deployment<I, O> deploy(DeploymentSpec spec, ModelLoader<I, O> loader, ModelKind kind) {
        return deploy(spec, ofKind(loader, kind), kind.inputsBeforeLoad(), false, caches(kind));
    }

    /** {@link #deployOnDemand(DeploymentSpec, ModelLoader, TensorIO)} of a model of {@code kind}, as the above. */
    public <I, O> Deployment<I, O> deployOnDemand(DeploymentSpec spec, ModelLoader<I, O> loader, ModelKind kind) {
        return deploy(spec, ofKind(loader, kind), kind.inputsBeforeLoad(), true, caches(kind));
    }

    /**
     * Whether each replica of a model of {@code kind} loads a model of its own ({@link ModelLoader#perReplica}): a
     * custom handler ({@code kind: java}), whose instance and class loader hold per-replica state, so that a
     * replacement starts afresh. Every other kind is loaded once per version and shared by its replicas.
     */
    public static boolean loadsPerReplica(ModelKind kind) {
        return kind == ModelKind.JAVA;
    }

    /** {@code loader}, loading once per replica when {@code kind} must ({@link #loadsPerReplica}). */
    private static <I, O> ModelLoader<I, O> ofKind(ModelLoader<I, O> loader, ModelKind kind) {
        if (!loadsPerReplica(kind) || loader.perReplica()) {
            return loader;
        }
        return new ModelLoader<>() {
            @Override
            public Model<I, O> load(DeploymentSpec spec) throws Exception {
                return loader.load(spec);
            }

            @Override
            public boolean perReplica() {
                return true;
            }
        };
    }

    /**
     * Whether deployments of {@code kind} cache results: the kinds whose inputs are texts with one result each
     * (text-embedding, text-classification), for which a result is a pure function of the text and the served model
     * (docs/design-decisions.md, "The result cache"). Tensor, no-op and composite kinds do not.
     */
    public static boolean caches(ModelKind kind) {
        return kind == ModelKind.TEXT_EMBEDDING || kind == ModelKind.TEXT_CLASSIFICATION;
    }

    /**
     * {@link #deploy(DeploymentSpec, ModelLoader)}, knowing how requests' tensors map to the model's inputs before it
     * loaded ({@code inputs}, the input side of its kind): a deployment created at zero replicas then queues its
     * first request while the autoscaler starts a replica, instead of refusing it.
     */
    public <I, O> Deployment<I, O> deploy(DeploymentSpec spec, ModelLoader<I, O> loader, TensorIO<I, O> inputs) {
        return deploy(spec, loader, java.util.Objects.requireNonNull(inputs, "inputs"), false, false);
    }

    /**
     * Creates a deployment that takes requests before it serves: while no replica serves, they wait in its queue
     * (within {@code max_queued_requests} and their deadlines) for one to start, their tensors mapped by
     * {@code inputs} (the input side of the model's kind: which model answers maps the outputs). Made for the models
     * of a multiplexed deployment, created with no replica and given one when their turn to load comes.
     */
    public <I, O> Deployment<I, O> deployOnDemand(DeploymentSpec spec, ModelLoader<I, O> loader, TensorIO<I, O> inputs) {
        return deploy(spec, loader, java.util.Objects.requireNonNull(inputs, "inputs"), true, false);
    }

    private synchronized <I, O> Deployment<I, O> deploy(DeploymentSpec spec, ModelLoader<I, O> loader,
            TensorIO<I, O> beforeLoad, boolean onDemand, boolean caches) {
        for (Deployment<?, ?> existing : deployments) {
            if (existing.name().equals(spec.name())) {
                throw new IllegalArgumentException("deployment '" + spec.name() + "' exists already");
            }
        }
        DeploymentMetrics metrics = DeploymentMetrics.create(registry, spec.name());
        Deployment<I, O> deployment = new Deployment<>(spec, loader, new Threads(launchers, health), loop, controller,
                nanoTime, wallClock, metrics, monitor.window(spec.name()), this::forget, beforeLoad, onDemand,
                new DeploymentCache<>(caches, spec.cache(), cacheBudget, metrics));
        deployments.add(deployment);
        deployment.start();
        autoscaler.register(deployment.scalingTarget());
        return deployment;
    }

    private synchronized void forget(Deployment<?, ?> deployment) {
        deployments.remove(deployment);
        autoscaler.unregister(deployment.scalingTarget());
        monitor.forget(deployment.name());
    }

    /** Closes every deployment (each drains its replicas), then stops the engine's threads. */
    @Override
    public void close() {
        List<Deployment<?, ?>> all;
        synchronized (this) {
            all = List.copyOf(deployments);
        }
        autoscaling.shutdownNow();
        all.parallelStream().forEach(Deployment::close);
        loop.close();
        launchers.shutdownNow();
        health.shutdownNow();
    }
}
