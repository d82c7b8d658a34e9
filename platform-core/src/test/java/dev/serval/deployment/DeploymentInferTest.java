package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.TensorIO;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link Deployment#infer} and {@link Deployment#embed}: one call from request tensors (or texts) to the answer. */
class DeploymentInferTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime);

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        if (model.probeGate != null) {
            model.probeGate.release(10_000);
        }
        engine.close();
    }

    /** One replica of {@code version} with one predictor, {@code ongoing} slots and {@code queued} queue places. */
    private static DeploymentSpec spec(String version, int ongoing, int queued) {
        DeploymentSpec defaults = DeploymentSpec.defaults("fake", "fake:");
        return defaults.withVersion(version).withPredictors(new PredictorSpec(1, 1, true))
                .withAdmission(defaults.admission().withMaxOngoingRequests(ongoing).withMaxQueuedRequests(queued));
    }

    private <I, O> Deployment<I, O> ready(DeploymentSpec spec, Model<I, O> served) {
        Deployment<I, O> deployment = engine.deploy(spec, ignored -> served);
        awaitState(deployment, DeploymentState.READY);
        return deployment;
    }

    private static Tensors texts(String... texts) {
        return new Tensors(List.of(Tensor.of("text", texts, texts.length)));
    }

    @Test
    void mapsTensorsInAndOutAndAnswersWithTheVersionThatServed() throws Exception {
        Deployment<String, String> deployment = ready(spec("7", 8, 10), model);

        Inference answer = deployment.infer(InferenceRequest.of(texts("a", "b", "c")))
                .get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals("7", answer.version());
        assertEquals(3, answer.inputs(), "one model input per text");
        Tensor upper = answer.outputs().get("upper").orElseThrow();
        assertArrayEquals(new String[] {"A", "B", "C"}, (String[]) upper.data());
    }

    @Test
    void refusesAnUnknownRequestedOutputBeforeRoutingNamingTheField() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 8, 10), model);
        int before = model.predictions.get();

        InvalidInput refused = assertThrows(InvalidInput.class,
                () -> deployment.infer(new InferenceRequest(texts("a"), List.of("upper", "lower"), CallContext.NONE)));

        assertEquals("outputs[1].name", refused.field());
        assertEquals("unknown output 'lower'; this model's outputs are 'upper'", refused.getMessage());
        assertEquals(before, model.predictions.get(), "nothing ran");
    }

    @Test
    void refusesTensorsTheModelCannotTakeSynchronously() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 8, 10), model);
        Tensors wrongName = new Tensors(List.of(Tensor.of("words", new String[] {"a"}, 1)));

        InvalidInput refused = assertThrows(InvalidInput.class, () -> deployment.infer(InferenceRequest.of(wrongName)));

        assertEquals("inputs[0].name", refused.field());
        assertThrows(InvalidInput.class, () -> deployment.infer(InferenceRequest.of(texts("bad"))),
                "the replica's own validation refuses at once, as submit does");
    }

    @Test
    void refusesWithNotReadyWhileLoading() {
        model.probeGate = new Semaphore(0);
        Deployment<String, String> loading = engine.deploy(spec("1", 8, 10), ignored -> model);

        NotReady refused = assertThrows(NotReady.class, () -> loading.infer(InferenceRequest.of(texts("a"))));

        assertEquals("model 'fake' is still loading", refused.getMessage());
    }

    @Test
    void refusesWithOverloadedWhenTheReplicaAndTheQueueAreFull() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 1, 1), model);
        CompletableFuture<Inference> running = deployment.infer(InferenceRequest.of(texts("wait")));
        CompletableFuture<Inference> queued = deployment.infer(InferenceRequest.of(texts("queued")));

        assertThrows(Overloaded.class, () -> deployment.infer(InferenceRequest.of(texts("refused"))));

        model.gate.release();
        assertEquals("WAIT", ((String[]) running.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs().tensors().getFirst()
                .data())[0]);
        queued.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void cancellingOrFailingTheAnswerTakesTheRequestOutOfTheQueue() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 1, 2), model);
        CompletableFuture<Inference> running = deployment.infer(InferenceRequest.of(texts("wait")));
        CompletableFuture<Inference> cancelled = deployment.infer(InferenceRequest.of(texts("a")));
        CompletableFuture<Inference> expired = deployment.infer(InferenceRequest.of(texts("b")));
        assertEquals(2, deployment.queuedRequests());

        cancelled.cancel(false);
        expired.completeExceptionally(new DeadlineExceeded("too late"));

        assertEquals(0, deployment.queuedRequests(), "both left the queue at once");
        ExecutionException failure = assertThrows(ExecutionException.class, expired::get);
        assertInstanceOf(DeadlineExceeded.class, failure.getCause());
        model.gate.release();
        running.get(WAIT_SECONDS, TimeUnit.SECONDS);
        Inference after = deployment.infer(InferenceRequest.of(texts("after"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertArrayEquals(new String[] {"AFTER"}, (String[]) after.outputs().tensors().getFirst().data(),
                "the deployment still serves");
    }

    /**
     * The engine drops a request whose deadline passed while it waited in the deployment's queue, without the edge's
     * timer: the only slot is held by a request the model keeps, the second waits behind it with its deadline already
     * past, and once the first is done the second never reaches the model; the slot goes to the third, queued behind.
     */
    @Test
    void dropsARequestWhoseDeadlinePassedWhileItWaitedInTheQueue() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 1, 2), model);
        CompletableFuture<Inference> running = deployment.infer(InferenceRequest.of(texts("wait")));
        CompletableFuture<Inference> late = deployment.infer(late());
        CompletableFuture<Inference> next = deployment.infer(InferenceRequest.of(texts("next")));
        assertEquals(2, deployment.queuedRequests());

        model.gate.release();

        assertDroppedUnrun(deployment, running, late, "in the queue of model 'fake'");
        assertArrayEquals(new String[] {"NEXT"}, (String[]) next.get(WAIT_SECONDS, TimeUnit.SECONDS).outputs()
                .tensors().getFirst().data());
        assertEquals(0, deployment.queuedRequests());
    }

    /**
     * The same within a replica: with two slots and one predictor, the second request is admitted to the replica and
     * waits for the predictor the first holds; the predictor drops it unrun once it is free.
     */
    @Test
    void dropsARequestWhoseDeadlinePassedWhileItWaitedForAPredictor() throws Exception {
        Deployment<String, String> deployment = ready(spec("1", 2, 2), model);
        CompletableFuture<Inference> running = deployment.infer(InferenceRequest.of(texts("wait")));
        CompletableFuture<Inference> late = deployment.infer(late());
        assertEquals(0, deployment.queuedRequests(), "admitted to the replica");

        model.gate.release();

        assertDroppedUnrun(deployment, running, late, "for a predictor of model 'fake'");
    }

    /** A request queued with its deadline already past, so that no test waits on a clock for it to pass. */
    private static InferenceRequest late() {
        return new InferenceRequest(texts("late"), null, new CallContext("r-late", System.nanoTime() - 1));
    }

    /**
     * Once {@code running} is answered, {@code late} has failed with the engine's {@link DeadlineExceeded} saying where
     * it waited ({@code where}), and never reached the model, which still serves.
     */
    private void assertDroppedUnrun(Deployment<String, String> deployment, CompletableFuture<Inference> running,
            CompletableFuture<Inference> late, String where) throws Exception {
        running.get(WAIT_SECONDS, TimeUnit.SECONDS);
        ExecutionException failure = assertThrows(ExecutionException.class, () -> late.get(WAIT_SECONDS,
                TimeUnit.SECONDS));
        assertInstanceOf(DeadlineExceeded.class, failure.getCause());
        assertEquals("the request's deadline passed while it waited " + where + "; it was not run",
                failure.getCause().getMessage());
        deployment.infer(InferenceRequest.of(texts("after"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertFalse(model.reached.contains("late"), "reached the model: " + model.reached);
    }

    @Test
    void selectsRequestedOutputsInTheirOrderAndRefusesUnknownOnesOnTheAnswer() {
        Tensor a = Tensor.of("a", new float[] {1}, 1);
        Tensor b = Tensor.of("b", new float[] {2}, 1);
        Inference answer = new Inference(new Tensors(List.of(a, b)), "1", 1);

        assertEquals(List.of(b, a, b), answer.select(List.of("b", "a", "b")));
        InvalidInput unknown = assertThrows(InvalidInput.class, () -> answer.select(List.of("a", "c")));
        assertEquals("outputs[1].name", unknown.field());
        assertEquals("unknown output 'c'; this model's outputs are 'a', 'b'", unknown.getMessage());
    }

    @Test
    void embedsTextsAndRefusesAnotherDimensionBeforeRouting() throws Exception {
        Deployment<String, Embedding> deployment = ready(spec("1", 8, 10), new FakeEmbeddings());

        List<Embedding> embeddings = deployment.embed(List.of("ab", "abc"), 0, CallContext.NONE)
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        List<Embedding> asked = deployment.embed(List.of("ab"), 3, CallContext.NONE).get(WAIT_SECONDS,
                TimeUnit.SECONDS);

        assertEquals(List.of(2, 3), embeddings.stream().map(Embedding::tokens).toList());
        assertEquals(3, asked.getFirst().vector().length);
        InvalidInput refused = assertThrows(InvalidInput.class,
                () -> deployment.embed(List.of("ab"), 5, CallContext.NONE));
        assertEquals("dimensions", refused.field());
        assertEquals("model 'fake' returns 3 dimensions; 'dimensions' 5 is not supported (the model declares no "
                + "matryoshka_dimensions to cut its vectors to)", refused.getMessage());
    }

    @Test
    void embedRefusesAsSubmitDoes() throws Exception {
        Deployment<String, Embedding> deployment = ready(spec("1", 8, 10), new FakeEmbeddings());

        InvalidInput empty = assertThrows(InvalidInput.class, () -> deployment.embed(List.of(), 0, CallContext.NONE));

        assertEquals("the request holds no inputs", empty.getMessage());
        deployment.close();
        assertSame(NotReady.class, assertThrows(RuntimeException.class,
                () -> deployment.embed(List.of("a"), 0, CallContext.NONE))
                .getClass());
    }

    /** Embeds a text as 3 dimensions; its token count is its length. */
    private static final class FakeEmbeddings implements Model<String, Embedding> {

        @Override
        public ModelSignature signature() {
            return new ModelSignature("fake", List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                    List.of(new TensorSignature("embedding", "FP32", List.of(-1L, 3L))));
        }

        @Override
        public TensorIO<String, Embedding> io() {
            throw new UnsupportedOperationException("embed() never maps tensors");
        }

        @Override
        public Predictor<String, Embedding> newPredictor() {
            return new Predictor<>() {
                @Override
                public Embedding predict(String input) {
                    return new Embedding(new float[] {1, 0, 0}, input.length());
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public String probeInput() {
            return "probe";
        }

        @Override
        public void validate(String input, int index) {
        }

        @Override
        public void close() {
        }
    }
}
