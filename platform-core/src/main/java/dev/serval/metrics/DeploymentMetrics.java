package dev.serval.metrics;

import dev.serval.model.BatchObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.noop.NoopDistributionSummary;
import io.micrometer.core.instrument.noop.NoopTimer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.ToDoubleFunction;

/**
 * The engine's meters for one deployment, created once with the deployment (its counters and start-up timers) or with
 * their first observation (its histograms: {@link DeferredMeter}, so that a deployment that has not served shows no
 * zero-count buckets): recording is a field read and an atomic add, never a lookup or a tag build. Names follow Prometheus conventions once exported (see
 * docs/metrics.md, which also maps each to its Ray Serve counterpart):
 *
 * <ul>
 *   <li>{@code serval_queue_wait_seconds{deployment}}: how long a request waited for a replica slot (0 when one
 *       was free at once);</li>
 *   <li>{@code serval_predictor_wait_seconds{deployment}}: how long an input waited inside its replica for a
 *       predictor thread;</li>
 *   <li>{@code serval_inference_seconds{deployment}}: model time per inference (one input, or one batch);</li>
 *   <li>{@code serval_batch_size}, {@code serval_batched_tokens_total}, {@code serval_padding_tokens_total}: batched
 *       inferences and their padding (padding waste = padding / batched tokens);</li>
 *   <li>{@code serval_request_inputs{deployment}}: inputs per request;</li>
 *   <li>{@code serval_replica_in_flight{deployment,replica}}: requests a replica works on now;</li>
 *   <li>{@code serval_replica_starts_total}, {@code serval_replica_failures_total{kind=start|unhealthy|failure_monitor}};</li>
 *   <li>{@code serval_model_load_seconds}, {@code serval_replica_warmup_seconds};</li>
 *   <li>{@code serval_autoscaling_decisions_total{deployment,direction=up|down}}: replica-count changes the
 *       autoscaler made; {@code serval_autoscaling_budget_refusals_total{deployment}}: decisions the CPU budget cut
 *       short.</li>
 * </ul>
 * Thread-safe: Micrometer meters are, and {@link DeferredMeter} registers each histogram once, whichever thread
 * observes first.
 */
public final class DeploymentMetrics implements BatchObserver {

    /** Stand-ins for a histogram that has observed nothing yet (empty snapshots; records go nowhere). */
    private static final Timer NO_TIMER = new NoopTimer(
            new Meter.Id("serval.unobserved", Tags.empty(), null, null, Meter.Type.TIMER));
    private static final DistributionSummary NO_SUMMARY = new NoopDistributionSummary(
            new Meter.Id("serval.unobserved", Tags.empty(), null, null, Meter.Type.DISTRIBUTION_SUMMARY));

    private final MeterRegistry registry;
    private final String deployment;
    private final DeferredMeter<Timer> queueWait;
    private final DeferredMeter<Timer> predictorWait;
    private final DeferredMeter<Timer> inference;
    private final DeferredMeter<Timer> batchWait;
    private final DeferredMeter<DistributionSummary> requestInputs;
    private final Counter replicaStarts;
    private final Counter startFailures;
    private final Counter unhealthy;
    private final Counter monitorReplacements;
    private final Timer modelLoad;
    private final DeferredMeter<DistributionSummary> batchSize;
    private final Counter batchedTokens;
    private final Counter paddingTokens;
    private final Counter widened;
    private final Timer warmUp;
    private final Counter upscales;
    private final Counter downscales;
    private final Counter budgetRefusals;

    private DeploymentMetrics(MeterRegistry registry, String deployment) {
        this.registry = registry;
        this.deployment = deployment;
        this.queueWait = latency("serval.queue.wait", "Time a request waited for a replica slot");
        this.predictorWait = latency("serval.predictor.wait", "Time an input waited in its replica for a predictor");
        this.inference = latency("serval.inference", "Model time per inference");
        this.batchWait = latency("serval.batch.wait", "Time a predictor waited for a fuller batch");
        this.requestInputs = new DeferredMeter<>(registry, DistributionSummary.builder("serval.request.inputs")
                .description("Inputs per request").tags("deployment", deployment).publishPercentileHistogram()
                .minimumExpectedValue(1.0).maximumExpectedValue(1024.0)::register, NO_SUMMARY);
        this.replicaStarts = Counter.builder("serval.replica.starts").description("Replicas started and warmed up")
                .tags("deployment", deployment).register(registry);
        this.startFailures = Counter.builder("serval.replica.failures").description("Replicas that failed")
                .tags("deployment", deployment, "kind", "start").register(registry);
        this.unhealthy = Counter.builder("serval.replica.failures").description("Replicas that failed")
                .tags("deployment", deployment, "kind", "unhealthy").register(registry);
        this.monitorReplacements = Counter.builder("serval.replica.failures").description("Replicas that failed")
                .tags("deployment", deployment, "kind", "failure_monitor").register(registry);
        this.batchSize = new DeferredMeter<>(registry, DistributionSummary.builder("serval.batch.size")
                .description("Inputs per batched inference").tags("deployment", deployment).publishPercentileHistogram()
                .minimumExpectedValue(1.0).maximumExpectedValue(1024.0)::register, NO_SUMMARY);
        this.batchedTokens = Counter.builder("serval.batched.tokens").description("Real tokens in batched inferences")
                .tags("deployment", deployment).register(registry);
        this.paddingTokens = Counter.builder("serval.padding.tokens")
                .description("Padding tokens added to fit batched inputs into one tensor")
                .tags("deployment", deployment).register(registry);
        this.widened = Counter.builder("serval.inferences.widened")
                .description("Inferences run on all of an idle replica's cores (lend_idle_cores)")
                .tags("deployment", deployment).register(registry);
        this.modelLoad = Timer.builder("serval.model.load").description("Time to load a model version")
                .tags("deployment", deployment).register(registry);
        this.warmUp = Timer.builder("serval.replica.warmup").description("Time to start and warm up a replica")
                .tags("deployment", deployment).register(registry);
        this.upscales = Counter.builder("serval.autoscaling.decisions")
                .description("Replica-count changes the autoscaler made").tags("deployment", deployment, "direction", "up")
                .register(registry);
        this.downscales = Counter.builder("serval.autoscaling.decisions")
                .description("Replica-count changes the autoscaler made")
                .tags("deployment", deployment, "direction", "down").register(registry);
        this.budgetRefusals = Counter.builder("serval.autoscaling.budget.refusals")
                .description("Autoscaler decisions the CPU budget granted fewer replicas than wanted")
                .tags("deployment", deployment).register(registry);
    }

    public static DeploymentMetrics create(MeterRegistry registry, String deployment) {
        return new DeploymentMetrics(registry, deployment);
    }

    /** Meters that go nowhere, for code paths that need no metrics (tests, benchmarks). */
    public static DeploymentMetrics discarding(String deployment) {
        return new DeploymentMetrics(new SimpleMeterRegistry(), deployment);
    }

    /**
     * The phase histograms, for readers that summarise them ({@code deployment.PhaseMeters}); never record here. One
     * that has observed nothing yet (not registered) reads as an empty stand-in.
     */
    public Timer queueWaitHistogram() {
        return queueWait.reading();
    }

    public Timer predictorWaitHistogram() {
        return predictorWait.reading();
    }

    public Timer batchWaitHistogram() {
        return batchWait.reading();
    }

    public Timer inferenceHistogram() {
        return inference.reading();
    }

    public DistributionSummary batchSizeHistogram() {
        return batchSize.reading();
    }

    public DistributionSummary requestInputsHistogram() {
        return requestInputs.reading();
    }

    private DeferredMeter<Timer> latency(String name, String description) {
        return new DeferredMeter<>(registry, Timer.builder(name).description(description).tags("deployment", deployment)
                .publishPercentileHistogram()::register, NO_TIMER);
    }

    public void queueWait(long nanos) {
        queueWait.get().record(nanos, TimeUnit.NANOSECONDS);
    }

    public void predictorWait(long nanos) {
        predictorWait.get().record(nanos, TimeUnit.NANOSECONDS);
    }

    public void batchWait(long nanos) {
        batchWait.get().record(nanos, TimeUnit.NANOSECONDS);
    }

    public void inference(long nanos) {
        inference.get().record(nanos, TimeUnit.NANOSECONDS);
    }

    /** One inference ran on the cores its replica's idle predictors lent it. */
    public void widened() {
        widened.increment();
    }

    @Override
    public void batch(int inputs, long realTokens, long paddedTokens) {
        batchSize.get().record(inputs);
        batchedTokens.increment(realTokens);
        paddingTokens.increment(paddedTokens);
    }

    public void requestInputs(int inputs) {
        requestInputs.get().record(inputs);
    }

    public void replicaStarted(long warmUpNanos) {
        replicaStarts.increment();
        warmUp.record(warmUpNanos, TimeUnit.NANOSECONDS);
    }

    public void replicaStartFailed() {
        startFailures.increment();
    }

    public void replicaUnhealthy() {
        unhealthy.increment();
    }

    /** The failure monitor replaced {@code replicas} replicas of this deployment. */
    public void replacedByFailureMonitor(int replicas) {
        monitorReplacements.increment(replicas);
    }

    /** The autoscaler changed the replica count, up or down. */
    public void autoscalingDecision(boolean up) {
        (up ? upscales : downscales).increment();
    }

    /** The CPU budget granted an autoscaling decision fewer replicas than it wanted. */
    public void autoscalingBudgetRefusal() {
        budgetRefusals.increment();
    }

    public void modelLoaded(long nanos) {
        modelLoad.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** Registers the in-flight gauge of one replica; remove it with {@link #remove} when the replica stops. */
    public Meter replicaInFlight(long replica, IntSupplier inFlight) {
        return Gauge.builder("serval.replica.in.flight", inFlight, supplier -> supplier.getAsInt())
                .description("Requests a replica works on now")
                .tags("deployment", deployment, "replica", Long.toString(replica))
                .strongReference(true)
                .register(registry);
    }

    /** Registers a gauge of this deployment read from {@code source} at scrape time. */
    public <T> Meter gauge(String name, String description, T source, ToDoubleFunction<T> value, String... tags) {
        String[] all = new String[tags.length + 2];
        all[0] = "deployment";
        all[1] = deployment;
        System.arraycopy(tags, 0, all, 2, tags.length);
        return Gauge.builder(name, source, value).description(description).tags(all).strongReference(true)
                .register(registry);
    }

    /** Registers a counter of this deployment. */
    public Counter counter(String name, String description, String... tags) {
        return Counter.builder(name).description(description).tags("deployment", deployment).tags(tags)
                .register(registry);
    }

    public void remove(Meter meter) {
        registry.remove(meter);
    }

    /**
     * Removes every meter of the registry tagged with this deployment (the engine's and those others registered with
     * its name, such as the edge's request counters): a deployment that is gone leaves no series, so that creating and
     * deleting deployments under new names does not grow the registry and the scrape for ever. Call once the
     * deployment has closed and before its name can be used again. A histogram that observed nothing by then never
     * registers: a late observation cannot bring a gone deployment's series back.
     */
    public void removeAll() {
        for (DeferredMeter<?> histogram : List.of(queueWait, predictorWait, inference, batchWait, requestInputs,
                batchSize)) {
            histogram.retire();
        }
        for (Meter meter : registry.getMeters()) {
            if (deployment.equals(meter.getId().getTag("deployment"))) {
                registry.remove(meter);
            }
        }
    }
}
