package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.model.ModelKind;
import dev.serval.request.InferenceRequest;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A deployment loaded on demand (a multiplexed model): created with no replica, its requests wait in its queue, mapped
 * by its kind, until the replica it is then given serves them; a failed load refuses them with the reason.
 */
class OnDemandDeploymentTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        engine.close();
    }

    private static DeploymentSpec spec(int queued) {
        DeploymentSpec defaults = DeploymentSpec.defaults("t-a", "fake:");
        return defaults.withPredictors(new PredictorSpec(1, 1, false)).withNumReplicas(0)
                .withAdmission(defaults.admission().withMaxQueuedRequests(queued));
    }

    private static Tensors texts(String... texts) {
        return new Tensors(List.of(Tensor.of("text", texts, texts.length)));
    }

    @Test
    void requestsWaitForTheLoadAndAreAnsweredByTheModelThatLoaded() throws Exception {
        Deployment<String, String> deployment = engine.deployOnDemand(spec(4), ignored -> model,
                ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        CompletableFuture<Inference> first = deployment.infer(InferenceRequest.of(texts("a", "b")));
        CompletableFuture<Inference> second = deployment.infer(InferenceRequest.of(texts("c")));
        assertFalse(first.isDone());
        assertFalse(deployment.serving().isDone());
        assertEquals(2, deployment.ongoingRequests(), "both wait in the queue");

        deployment.update(deployment.spec().withNumReplicas(1));

        assertArrayEquals(new String[] {"A", "B"},
                (String[]) first.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().get("upper").orElseThrow().data());
        assertArrayEquals(new String[] {"C"},
                (String[]) second.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().get("upper").orElseThrow().data());
        deployment.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void theQueueBoundsWhatWaitsForTheLoad() {
        Deployment<String, String> deployment = engine.deployOnDemand(spec(1), ignored -> model,
                ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        deployment.infer(InferenceRequest.of(texts("a")));
        assertThrows(Overloaded.class, () -> deployment.infer(InferenceRequest.of(texts("b"))));
    }

    @Test
    void aFailedLoadRefusesWhatWaitedWithTheReason() {
        Deployment<String, String> deployment = engine.deployOnDemand(spec(4), ignored -> {
            throw new IllegalStateException("broken weights");
        }, ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        CompletableFuture<Inference> waiting = deployment.infer(InferenceRequest.of(texts("a")));
        deployment.update(deployment.spec().withNumReplicas(1));

        ExecutionException failed = assertThrows(ExecutionException.class,
                () -> waiting.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, failed.getCause());
        assertTrue(failed.getCause().getMessage().contains("broken weights"), failed.getCause().getMessage());
        ExecutionException serving = assertThrows(ExecutionException.class,
                () -> deployment.serving().get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(serving.getCause().getMessage().contains("broken weights"));
        awaitState(deployment, DeploymentState.FAILED);
    }

    @Test
    void unloadedRequestsWaitForTheNextLoad() throws Exception {
        Deployment<String, String> deployment = engine.deployOnDemand(spec(4).withNumReplicas(1), ignored -> model,
                ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        awaitState(deployment, DeploymentState.READY);
        deployment.update(deployment.spec().withNumReplicas(0)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        awaitState(deployment, DeploymentState.LOADING);
        CompletableFuture<Inference> waiting = deployment.infer(InferenceRequest.of(texts("x")));
        assertFalse(deployment.serving().isDone(), "a new wait once it stopped serving");
        deployment.update(deployment.spec().withNumReplicas(1));
        assertArrayEquals(new String[] {"X"},
                (String[]) waiting.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().get("upper").orElseThrow().data());
    }
}
