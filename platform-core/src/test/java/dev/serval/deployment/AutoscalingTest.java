package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitServed;
import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.health.FailureMonitor;
import dev.serval.request.InferenceRequest;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.DeploymentStatus;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The autoscaler driving real deployments: real controller, launcher and predictor threads, a fake model. */
class AutoscalingTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final AtomicInteger loads = new AtomicInteger();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
            InstantSource.system(), registry, FailureMonitor.Settings.defaults(), Duration.ofMillis(20), 8);

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        engine.close();
        assertFalse(model.closedWhilePredicting, "the model was closed while a predictor was inside it");
    }

    /** One predictor thread per replica, two ongoing requests each, short delays. */
    private static DeploymentSpec spec(AutoscalingSpec autoscaling, int maxQueued) {
        return DeploymentSpec.defaults("scaled", "fake:")
                .withAdmission(new AdmissionSpec(2, maxQueued, 4, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withPredictors(new PredictorSpec(1, 1, false))
                .withRollout(RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(5)))
                .withAutoscaling(autoscaling);
    }

    private Deployment<String, String> deploy(DeploymentSpec spec) {
        return engine.deploy(spec, ignored -> {
            loads.incrementAndGet();
            return model;
        });
    }

    /** Returns once the deployment's status satisfies {@code condition}; fails after 10 s with the last status. */
    private static DeploymentStatus awaitStatus(Deployment<?, ?> deployment, Predicate<DeploymentStatus> condition,
            String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        DeploymentStatus status;
        while (!condition.test(status = deployment.status())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("expected " + what + ": " + status + ", autoscaler: "
                        + deployment.autoscaling().orElse(null));
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        return status;
    }

    @Test
    void replicasFollowALoadStepUpAndBackDownWithoutLosingARequest() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMaxReplicas(4).withTiming(Duration.ofMillis(200),
                Duration.ofMillis(500), null, Duration.ofMillis(200));
        Deployment<String, String> deployment = deploy(spec(autoscaling, 100));
        awaitState(deployment, DeploymentState.READY);
        assertEquals(1, deployment.status().desired());

        long step = System.nanoTime();
        List<CompletableFuture<List<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            requests.add(deployment.submit(List.of("wait-" + i)));
        }
        awaitStatus(deployment, s -> s.running() == 4, "4 replicas running for 8 ongoing requests, target 2");
        long scaledUp = System.nanoTime() - step;
        model.awaitWaiting(4); // each new replica took queued requests
        System.out.printf("load step to 4 replicas serving: %d ms (upscale_delay 200 ms)%n", scaledUp / 1_000_000);
        assertEquals(4, deployment.autoscaling().orElseThrow().lastChange().to());

        model.gate.release(8);
        for (int i = 0; i < requests.size(); i++) {
            assertEquals(List.of("WAIT-" + i), requests.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        DeploymentStatus down = awaitStatus(deployment, s -> s.desired() == 1 && s.running() == 1 && s.stopping() == 0,
                "back to 1 replica when idle");
        assertEquals(0, down.recovering());
        assertEquals(1.0, registry.get("serval.autoscaling.decisions").tag("direction", "up").counter().count());
        assertEquals(1.0, registry.get("serval.autoscaling.decisions").tag("direction", "down").counter().count());
        assertEquals(1.0, registry.get("serval.autoscaling.desired.replicas").gauge().value());
    }

    @Test
    void scalesToZeroReleasingTheModelAndAColdStartServesTheNextRequest() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMinReplicas(0).withMaxReplicas(2)
                .withTiming(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300), Duration.ofMillis(100));
        Deployment<String, String> deployment = deploy(spec(autoscaling, 4));
        awaitState(deployment, DeploymentState.READY);
        assertEquals(List.of("A"), deployment.submit(List.of("a")).get(WAIT_SECONDS, TimeUnit.SECONDS));

        awaitState(deployment, DeploymentState.IDLE);
        awaitStatus(deployment, s -> s.stopping() == 0 && model.closed, "the last replica stopped and the model's "
                + "weights released");
        assertTrue(deployment.signature().isPresent(), "metadata outlives the replicas");
        deployment.checkAccepting(); // a request is taken at zero: it starts a replica
        model.closed = false;

        CompletableFuture<List<String>> cold = deployment.submit(List.of("b"));

        assertEquals(List.of("B"), cold.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(2, loads.get(), "loaded again on demand");
        assertEquals(DeploymentState.READY, deployment.state());
        assertTrue(deployment.autoscaling().orElseThrow().lastChange().reason().contains("arrived while scaled to zero"));
    }

    @Test
    void atZeroRequestsPastTheQueueBoundAreRefusedWithTheMeasuredStartTime() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMinReplicas(0).withMaxReplicas(1)
                .withTiming(Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ofMillis(20));
        CountDownLatch secondLoad = new CountDownLatch(1);
        Deployment<String, String> deployment = engine.deploy(spec(autoscaling, 1), ignored -> {
            if (loads.incrementAndGet() > 1) {
                awaitUninterruptibly(secondLoad);
            }
            return model;
        });
        awaitServed(deployment); // READY for a moment only: it scales to zero at once
        awaitState(deployment, DeploymentState.IDLE);

        CompletableFuture<List<String>> queued = deployment.submit(List.of("a"));
        awaitStatus(deployment, s -> s.starting() == 1, "a replica starting for the queued request");
        Overloaded refused = assertThrows(Overloaded.class, () -> deployment.submit(List.of("b")));

        assertTrue(refused.getMessage().contains("has no replica serving yet (one is starting) and 1 requests are "
                + "queued (max-queued-requests 1)"), refused.getMessage());
        assertTrue(refused.retryAfter().toMillis() >= 1, refused.retryAfter().toString());
        secondLoad.countDown();
        assertEquals(List.of("A"), queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void aColdStartThatFailsRefusesItsRequestsAndTheDeploymentGoesBackToZero() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMinReplicas(0).withMaxReplicas(1)
                .withTiming(Duration.ZERO, Duration.ZERO, Duration.ofMillis(200), Duration.ofMillis(20));
        java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean();
        Deployment<String, String> deployment = engine.deploy(spec(autoscaling, 4), ignored -> {
            loads.incrementAndGet();
            if (broken.get()) {
                throw new IllegalStateException("the model file is gone");
            }
            return model;
        });
        awaitServed(deployment); // READY for a moment only: it scales to zero at once
        awaitState(deployment, DeploymentState.IDLE);
        broken.set(true);

        CompletableFuture<List<String>> cold = deployment.submit(List.of("a"));

        java.util.concurrent.ExecutionException failed = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> cold.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(failed.getCause() instanceof NotReady && failed.getCause().getMessage().contains("the model file "
                + "is gone"), failed.getCause().toString());
        awaitState(deployment, DeploymentState.IDLE); // not stuck FAILED at zero: the next request tries again
        assertTrue(deployment.failure().orElseThrow().contains("the model file is gone"));
    }

    @Test
    void aFixedDeploymentIsNeverScaled() throws Exception {
        Deployment<String, String> deployment = deploy(spec(AutoscalingSpec.DEFAULTS, 100).withNumReplicas(1));
        awaitState(deployment, DeploymentState.READY);
        List<CompletableFuture<List<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            requests.add(deployment.submit(List.of("wait-" + i)));
        }
        model.awaitWaiting(1);
        assertTrue(deployment.autoscaling().isEmpty());
        model.gate.release(6);
        for (CompletableFuture<List<String>> request : requests) {
            request.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        assertEquals(1, deployment.status().desired());
        assertEquals(1, loads.get());
    }

    @Test
    void aDeploymentCreatedAtZeroLoadsOnItsFirstRequest() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMinReplicas(0).withMaxReplicas(1)
                .withInitialReplicas(0);
        CountDownLatch flooded = new CountDownLatch(1);
        Deployment<String, String> deployment = engine.deploy(spec(autoscaling, 4), ignored -> {
            loads.incrementAndGet();
            awaitUninterruptibly(flooded); // the replica stays starting while the flood below arrives
            return model;
        });
        awaitState(deployment, DeploymentState.IDLE);
        assertEquals(0, loads.get());
        assertTrue(deployment.signature().isEmpty(), "no model has loaded yet");
        Tensors texts = new Tensors(List.of(Tensor.of("text", new String[] {"a"}, 1)));

        NotReady refused = assertThrows(NotReady.class, () -> deployment.infer(InferenceRequest.of(texts)));
        assertTrue(refused.getMessage().contains("is starting its first replica"), refused.getMessage());
        for (int i = 0; i < 100; i++) { // a flood of refused requests wakes it once
            assertThrows(NotReady.class, () -> deployment.infer(InferenceRequest.of(texts)));
        }
        flooded.countDown();

        awaitState(deployment, DeploymentState.READY);
        assertEquals(1, loads.get());
        assertEquals("A", ((String[]) deployment.infer(InferenceRequest.of(texts)).get(WAIT_SECONDS, TimeUnit.SECONDS)
                .outputs().tensors().getFirst().data())[0]);
    }

    @Test
    void aDeploymentCreatedAtZeroThatKnowsItsKindQueuesItsFirstRequestUntilItLoads() throws Exception {
        AutoscalingSpec autoscaling = AutoscalingSpec.DEFAULTS.withMinReplicas(0).withMaxReplicas(1)
                .withInitialReplicas(0);
        Deployment<String, String> deployment = engine.deploy(spec(autoscaling, 4), ignored -> {
            loads.incrementAndGet();
            return model;
        }, dev.serval.model.ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        awaitState(deployment, DeploymentState.IDLE);
        Tensors texts = new Tensors(List.of(Tensor.of("text", new String[] {"a"}, 1)));

        // waits, not refused
        CompletableFuture<dev.serval.deployment.Inference> first = deployment.infer(InferenceRequest.of(texts));

        assertEquals("A", ((String[]) first.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().tensors().getFirst()
                .data())[0]);
        assertEquals(1, loads.get());
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
