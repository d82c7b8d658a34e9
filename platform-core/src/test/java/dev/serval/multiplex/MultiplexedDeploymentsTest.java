package dev.serval.multiplex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.serval.deployment.Deployment;
import dev.serval.deployment.FakeModel;
import dev.serval.deployment.Inference;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.ModelKind;
import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.request.InferenceRequest;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.MultiplexSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The multiplexer over real deployments (controller, launcher and predictor threads; fake models that block on a
 * gate): concurrent first requests load a model once, and a model whose request is running is not the one unloaded
 * to make room, even when it is the least recently used.
 */
class MultiplexedDeploymentsTest {

    private static final long WAIT_SECONDS = 10;

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);
    private final Map<String, FakeModel> models = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> loads = new ConcurrentHashMap<>();
    private final List<Multiplexer<?>> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        models.values().forEach(model -> model.gate.release(10_000));
        opened.forEach(Multiplexer::close);
        engine.close();
    }

    /** Each model a deployment of its own, loaded on demand, with one predictor thread. */
    private final class EngineHosting implements Multiplexer.Hosting<Deployment<String, String>> {
        @Override
        public Deployment<String, String> create(String model, String version) {
            DeploymentSpec spec = DeploymentSpec.defaults(model, "fake:").withVersion(version)
                    .withPredictors(new PredictorSpec(1, 1, false)).withNumReplicas(0);
            return engine.deployOnDemand(spec, ignored -> {
                loads.computeIfAbsent(model, m -> new AtomicInteger()).incrementAndGet();
                return models.computeIfAbsent(model, m -> new FakeModel());
            }, ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        }

        @Override
        public CompletableFuture<Void> replicas(Deployment<String, String> handle, int count) {
            handle.update(handle.spec().withNumReplicas(count));
            return handle.serving();
        }

        @Override
        public int queued(Deployment<String, String> handle) {
            return handle.queuedRequests();
        }

        @Override
        public int serving(Deployment<String, String> handle) {
            return handle.routableReplicas();
        }

        @Override
        public int capacity(Deployment<String, String> handle) {
            return handle.spec().admission().maxOngoingRequests();
        }

        @Override
        public void update(Deployment<String, String> handle, String version) {
            handle.update(handle.spec().withVersion(version));
        }

        @Override
        public int ongoing(Deployment<String, String> handle) {
            return handle.ongoingRequests();
        }

        @Override
        public boolean failed(Deployment<String, String> handle) {
            return handle.state() == DeploymentState.FAILED;
        }

        @Override
        public void close(Deployment<String, String> handle) {
            handle.close();
        }
    }

    private Multiplexer<Deployment<String, String>> multiplexer(int replicas, int perReplica) {
        Map<String, Candidate> repository = Map.of("t-a", new Candidate("1", 1), "t-b", new Candidate("1", 1),
                "t-c", new Candidate("1", 1));
        Multiplexer<Deployment<String, String>> multiplexer = new Multiplexer<>("tenants", replicas,
                new MultiplexSpec(perReplica, 0), new EngineHosting(), () -> repository,
                new Multiplexer.Tuning(Duration.ofHours(1), Duration.ofMillis(300), 0), System::nanoTime,
                new SimpleMeterRegistry());
        opened.add(multiplexer);
        return multiplexer;
    }

    /** A request to {@code model}: pinned until it is answered, as the HTTP edge does. */
    private static CompletableFuture<Inference> infer(Multiplexer<Deployment<String, String>> multiplexer,
            String model, String text) {
        Multiplexer.Entry<Deployment<String, String>> entry = multiplexer.acquire(model);
        assertNotNull(entry, model);
        CompletableFuture<Inference> answer = entry.handle().infer(
                InferenceRequest.of(new Tensors(List.of(Tensor.of("text", new String[] {text}, 1)))));
        answer.whenComplete((ignored, failure) -> entry.release());
        return answer;
    }

    private static String answer(CompletableFuture<Inference> answer) throws Exception {
        return ((String[]) answer.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().get("upper").orElseThrow().data())[0];
    }

    @Test
    void concurrentFirstRequestsShareOneLoadAndAreAllAnswered() throws Exception {
        Multiplexer<Deployment<String, String>> multiplexer = multiplexer(2, 2);
        int callers = 8;
        CyclicBarrier together = new CyclicBarrier(callers);
        List<CompletableFuture<Inference>> answers = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            String text = "x" + i;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    together.await(WAIT_SECONDS, TimeUnit.SECONDS);
                    answers.add(infer(multiplexer, "t-a", text));
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        }
        assertEquals(callers, answers.size());
        for (CompletableFuture<Inference> each : answers) {
            assertEquals("X", answer(each).substring(0, 1));
        }
        assertEquals(1, loads.get("t-a").get(), "one load for all first requests");
        assertEquals(1, multiplexer.loadedCount());
    }

    @Test
    void theModelARunningRequestHoldsStaysWhileAnIdleOneMakesRoom() throws Exception {
        Multiplexer<Deployment<String, String>> multiplexer = multiplexer(1, 2);
        CompletableFuture<Inference> running = infer(multiplexer, "t-a", "wait-a"); // blocks in the model's gate
        models.computeIfAbsent("t-a", m -> new FakeModel()).awaitWaiting(1);
        assertEquals("B", answer(infer(multiplexer, "t-b", "b"))); // t-b now more recent than t-a, and idle

        assertEquals("C", answer(infer(multiplexer, "t-c", "c")));

        assertEquals(List.of("t-c", "t-a"), multiplexer.replicaModels().getFirst().models());
        assertFalse(running.isDone(), "t-a's request still runs on t-a");
        models.get("t-a").gate.release();
        assertEquals("WAIT-A", answer(running));
        assertEquals(1, loads.get("t-a").get(), "t-a was never unloaded");
    }
}
