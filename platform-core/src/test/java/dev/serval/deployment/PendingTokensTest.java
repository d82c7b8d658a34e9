package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.Overloaded;
import dev.serval.health.FailureMonitor;
import dev.serval.model.ModelKind;
import dev.serval.request.InferenceRequest;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A deployment's {@code max_pending_tokens}: a text model's requests are counted at their estimate (code points plus
 * special tokens per text, at most what the model reads of one) from admission to answer, and the request past the
 * setting is refused at once with {@link Overloaded}, before it takes a slot or a queue place.
 */
class PendingTokensTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
            InstantSource.system(), registry, FailureMonitor.Settings.defaults());

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        engine.close();
    }

    /** One replica, 4 predictors and 8 slots: only {@code max_pending_tokens} refuses here. */
    private static DeploymentSpec spec(int maxPendingTokens) {
        DeploymentSpec defaults = DeploymentSpec.defaults("fake", "fake:");
        return defaults.withPredictors(new PredictorSpec(4, 1, true))
                .withAdmission(defaults.admission().withMaxPendingTokens(maxPendingTokens));
    }

    private Deployment<String, String> ready(DeploymentSpec spec) {
        Deployment<String, String> deployment = engine.deploy(spec, ignored -> model);
        awaitState(deployment, DeploymentState.READY);
        return deployment;
    }

    private double gauge() {
        return registry.get("serval.pending.tokens").tags("deployment", "fake").gauge().value();
    }

    @Test
    void longTextsFillTheLimitTheNextRequestIsRefusedAndAShortOneIsAdmittedOnceTheyAreAnswered() throws Exception {
        model.maxInputTokens = 100; // truncates at 100 tokens
        Deployment<String, String> deployment = ready(spec(250));
        String longText = "wait " + "x".repeat(500);
        CompletableFuture<List<String>> first = deployment.submit(List.of(longText));
        CompletableFuture<List<String>> second = deployment.submit(List.of(longText));
        model.awaitWaiting(2);
        assertEquals(200, deployment.router().pendingTokens().count());
        assertEquals(200, gauge());

        Overloaded refused = assertThrows(Overloaded.class,
                () -> deployment.submit(List.of("x".repeat(40), "y".repeat(40))));

        assertEquals("model 'fake' is overloaded: its admitted requests hold an estimated 200 tokens and this one is "
                + "estimated at 84 (max_pending_tokens 250)", refused.getMessage());
        assertEquals(0, deployment.queuedRequests());
        assertEquals(2, deployment.inFlight(), "the refused request took no slot");
        assertEquals(List.of("HI"), deployment.submit(List.of("hi")).get(WAIT_SECONDS, TimeUnit.SECONDS),
                "a short request still fits");
        assertThrows(Overloaded.class, () -> deployment.submit(List.of(longText)));

        model.gate.release(2);
        first.get(WAIT_SECONDS, TimeUnit.SECONDS);
        second.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
        assertEquals(List.of("X".repeat(40), "Y".repeat(40)),
                deployment.submit(List.of("x".repeat(40), "y".repeat(40))).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(0, gauge());
    }

    @Test
    void theLimitChangesInPlace() throws Exception {
        model.maxInputTokens = 100;
        Deployment<String, String> deployment = ready(spec(150));
        CompletableFuture<List<String>> held = deployment.submit(List.of("wait " + "x".repeat(500)));
        model.awaitWaiting(1);
        assertThrows(Overloaded.class, () -> deployment.submit(List.of("x".repeat(200))));
        int replicas = deployment.routableReplicas();

        deployment.update(spec(1_000)).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(1_000, deployment.router().pendingTokens().limit());
        CompletableFuture<List<String>> admitted = deployment.submit(List.of("wait " + "y".repeat(500)));
        model.awaitWaiting(2);
        assertEquals(200, deployment.router().pendingTokens().count());
        assertEquals(replicas, deployment.routableReplicas());
        model.gate.release(2);
        held.get(WAIT_SECONDS, TimeUnit.SECONDS);
        admitted.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
    }

    @Test
    void aModelThatReadsNoTokensIsNeverCounted() throws Exception {
        model.maxInputTokens = 0; // a tensor model, a pipeline, a handler
        Deployment<String, String> deployment = ready(spec(1));
        CompletableFuture<List<String>> held = deployment.submit(List.of("wait " + "x".repeat(500)));
        model.awaitWaiting(1);

        assertEquals(List.of("X".repeat(500)), deployment.submit(List.of("x".repeat(500)))
                .get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertEquals(0, deployment.router().pendingTokens().count());
        model.gate.release(1);
        held.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void resultCacheHitsAreNotCountedOnlyTheMissesRouted() throws Exception {
        model.maxInputTokens = 100;
        Deployment<String, String> deployment = engine.deploy(spec(150), ignored -> model, ModelKind.TEXT_EMBEDDING);
        awaitState(deployment, DeploymentState.READY);
        String cached = "x".repeat(200);
        deployment.infer(InferenceRequest.of(texts(cached))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
        CompletableFuture<List<String>> held = deployment.submit(List.of("wait " + "y".repeat(500)));
        model.awaitWaiting(1);

        deployment.infer(InferenceRequest.of(texts(cached))).get(WAIT_SECONDS, TimeUnit.SECONDS); // a hit: no tokens
        Overloaded refused = assertThrows(Overloaded.class,
                () -> deployment.infer(InferenceRequest.of(texts(cached, "z".repeat(200)))));

        assertTrue(refused.getMessage().contains("hold an estimated 100 tokens and this one is estimated at 100 "),
                "only the miss is counted: " + refused.getMessage());
        model.gate.release(1);
        held.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
    }

    @Test
    void requestsWaitingAtZeroReplicasAreCountedAtTheLastServedModelsEstimateAndGivenBackWhenServed() throws Exception {
        model.maxInputTokens = 100;
        Deployment<String, String> deployment = engine.deployOnDemand(spec(150), ignored -> model,
                ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());
        awaitState(deployment, DeploymentState.READY); // it served: its model's estimate is known
        deployment.update(deployment.spec().withNumReplicas(0)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        awaitState(deployment, DeploymentState.LOADING);

        CompletableFuture<Inference> waiting = deployment.infer(InferenceRequest.of(texts("x".repeat(500))));
        assertEquals(100, deployment.router().pendingTokens().count(), "counted while it waits for a replica");
        assertThrows(Overloaded.class, () -> deployment.infer(InferenceRequest.of(texts("y".repeat(500)))));
        assertEquals(1, deployment.queuedRequests(), "the refused request took no queue place");

        deployment.update(deployment.spec().withNumReplicas(1));
        waiting.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
    }

    @Test
    void beforeAnyVersionServedATextIsCountedAtItsCodePointsUncapped() throws Exception {
        model.maxInputTokens = 100; // not known to admission until a replica of it has served
        Deployment<String, String> deployment = engine.deployOnDemand(spec(150).withNumReplicas(0), ignored -> model,
                ModelKind.TEXT_CLASSIFICATION.inputsBeforeLoad());

        CompletableFuture<Inference> waiting = deployment.infer(InferenceRequest.of(texts("x".repeat(98))));
        assertEquals(100, deployment.router().pendingTokens().count(), "98 code points + [CLS] + [SEP]");
        assertThrows(Overloaded.class, () -> deployment.infer(InferenceRequest.of(texts("y".repeat(98)))));

        deployment.update(deployment.spec().withNumReplicas(1));
        waiting.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, deployment.router().pendingTokens().count());
    }

    private static Tensors texts(String... texts) {
        return new Tensors(List.of(Tensor.of("text", texts, texts.length)));
    }

    @Test
    void theDefaultIsFourTimesMaxTokensPerRequest() {
        assertEquals(4L * AdmissionSpec.DEFAULT_MAX_TOKENS_PER_REQUEST, AdmissionSpec.DEFAULTS.maxPendingTokens());
        assertEquals(1_048_576, AdmissionSpec.DEFAULT_MAX_PENDING_TOKENS);
    }
}
