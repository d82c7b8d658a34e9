package dev.serval.compose;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.Inference;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.model.Composite;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.ModelSignature;
import dev.serval.model.PipelineStep;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.Invocation;
import dev.serval.request.TensorIO;
import dev.serval.request.WholeRequestIO;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Pipelines on a real engine with fake step models: the steps run in turn with renamed tensors, the load refuses
 * pipelines whose steps do not line up, a step's refusal is the pipeline's answer, and ending a pipeline request
 * (cancelled, past its deadline) ends the step it waits for.
 */
class PipelineTest {

    private static final long WAIT_SECONDS = 10;

    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(20), System::nanoTime);
    private final MeterRegistry meters = new SimpleMeterRegistry();
    private final Map<String, Deployment<?, ?>> deployments = new ConcurrentHashMap<>();
    private final Callees callees = new Callees() {
        @Override
        public Deployment<?, ?> find(String name) {
            return deployments.get(name);
        }

        @Override
        public MeterRegistry meters() {
            return meters;
        }
    };
    private final Semaphore gate = new Semaphore(0);

    @AfterEach
    void close() {
        gate.release(10_000);
        engine.close();
    }

    /** A step: {@code out = factor * in + offset}, FP32, optionally held at {@code gate} before answering. */
    private Deployment<Tensors, Tensors> affine(String name, String in, String out, float factor, float offset,
            boolean gated, int maxQueued) throws Exception {
        DeploymentSpec defaults = DeploymentSpec.defaults(name, "fake:");
        DeploymentSpec spec = defaults.withPredictors(new PredictorSpec(1, 1, false))
                .withAdmission(defaults.admission().withMaxOngoingRequests(1).withMaxQueuedRequests(maxQueued));
        Deployment<Tensors, Tensors> deployment = engine.deploy(spec,
                ignored -> new Affine(in, out, factor, offset, gated ? gate : null), WholeRequestIO.instance());
        deployment.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        deployments.put(name, deployment);
        return deployment;
    }

    private Deployment<Invocation, Tensors> pipeline(String name, PipelineStep... steps) throws Exception {
        DeploymentSpec spec = DeploymentSpec.defaults(name, "fake:").withPredictors(new PredictorSpec(2, 1, false));
        Composite.Pipeline pipeline = new Composite.Pipeline(List.of(steps));
        Deployment<Invocation, Tensors> deployment = engine.deploy(spec,
                ignored -> PipelineModel.load(new Composition(name, Path.of("."), callees), pipeline,
                        Duration.ofSeconds(WAIT_SECONDS)), ModelKind.PIPELINE.inputsBeforeLoad());
        deployments.put(name, deployment);
        return deployment;
    }

    private static Tensors x(float... values) {
        return new Tensors(List.of(Tensor.of("x", values, values.length)));
    }

    private static float[] output(Inference answer, String name) {
        return (float[]) answer.outputs().get(name).orElseThrow().data();
    }

    @Test
    void stepsRunInTurnWithRenamedTensorsAndMetadataSpansThePipeline() throws Exception {
        affine("double", "x", "y", 2, 1, false, 8);
        affine("triple", "x", "z", 3, 0, false, 8);
        Deployment<Invocation, Tensors> chain = pipeline("chain", new PipelineStep("double", Map.of()),
                new PipelineStep("triple", Map.of("y", "x")));
        chain.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);

        Inference answer = chain.infer(InferenceRequest.of(x(1, 2))).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertArrayEquals(new float[] {9, 15}, output(answer, "z"), "3 * (2x + 1)");
        ModelSignature signature = chain.signature().orElseThrow();
        assertEquals(PipelineModel.PLATFORM, signature.platform());
        assertEquals("x", signature.inputs().getFirst().name(), "the first step's inputs");
        assertEquals("z", signature.outputs().getFirst().name(), "the last step's outputs");
        assertEquals(2, meters.get("serval.call").tags("deployment", "chain", "outcome", "answered").timers().size(),
                "one timer per step");
        assertEquals(1, meters.get("serval.call").tags("callee", "triple", "outcome", "answered").timer().count());
    }

    @Test
    void aPipelineWaitsOnOtherDeploymentsExactlyWhileAStepCallIsUnderWay() throws Exception {
        affine("held", "x", "y", 2, 0, true, 8);
        Deployment<Invocation, Tensors> chain = pipeline("chain", new PipelineStep("held", Map.of()));
        chain.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        Model<?, ?> model = chain.replicas().getFirst().model();
        assertFalse(model.waitsOnOtherDeployments());

        CompletableFuture<Inference> answer = chain.infer(InferenceRequest.of(x(1)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!model.waitsOnOtherDeployments()) { // the pipeline's predictor has called the held step
            assertTrue(System.nanoTime() < deadline, "the step was never called");
            Thread.onSpinWait();
        }
        gate.release();
        assertArrayEquals(new float[] {2}, output(answer.get(WAIT_SECONDS, TimeUnit.SECONDS), "y"));
        while (model.waitsOnOtherDeployments()) { // the call's end is counted by the step's completing thread
            assertTrue(System.nanoTime() < deadline, "the call never ended");
            Thread.onSpinWait();
        }
    }

    @Test
    void aThreeStepPipelineAndAPipelineAsAStep() throws Exception {
        affine("double", "x", "y", 2, 1, false, 8);
        affine("inc", "y", "y", 1, 1, false, 8);
        affine("triple", "y", "z", 3, 0, false, 8);
        Deployment<Invocation, Tensors> three = pipeline("three", new PipelineStep("double", Map.of()),
                new PipelineStep("inc", Map.of()), new PipelineStep("triple", Map.of()));
        three.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertArrayEquals(new float[] {12},
                output(three.infer(InferenceRequest.of(x(1))).get(WAIT_SECONDS, TimeUnit.SECONDS), "z"));

        Deployment<Invocation, Tensors> outer = pipeline("outer", new PipelineStep("three", Map.of()),
                new PipelineStep("double", Map.of("z", "x")));
        outer.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertArrayEquals(new float[] {25},
                output(outer.infer(InferenceRequest.of(x(1))).get(WAIT_SECONDS, TimeUnit.SECONDS), "y"));
    }

    @Test
    void theLoadRefusesStepsThatAreMissingOrDoNotLineUp() throws Exception {
        affine("double", "x", "y", 2, 1, false, 8);
        affine("triple", "x", "z", 3, 0, false, 8);
        Composition composition = new Composition("chain", Path.of("."), callees);
        Duration wait = Duration.ofSeconds(1);

        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class, () -> PipelineModel.load(
                composition, new Composite.Pipeline(List.of(new PipelineStep("double", Map.of()),
                        new PipelineStep("nope", Map.of()))), wait));
        assertTrue(missing.getMessage().contains("step 2 ('nope'): no deployment is called 'nope'"),
                missing.getMessage());

        IllegalArgumentException names = assertThrows(IllegalArgumentException.class, () -> PipelineModel.load(
                composition, new Composite.Pipeline(List.of(new PipelineStep("double", Map.of()),
                        new PipelineStep("triple", Map.of()))), wait));
        assertTrue(names.getMessage().contains("step 2 ('triple') takes 'x', which step 1 ('double') does not return"),
                names.getMessage());

        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> PipelineModel.load(
                composition, new Composite.Pipeline(List.of(new PipelineStep("double", Map.of()),
                        new PipelineStep("triple", Map.of("w", "x")))), wait));
        assertTrue(unknown.getMessage().contains("maps 'w', which step 1 ('double') does not return"),
                unknown.getMessage());

        IllegalArgumentException itself = assertThrows(IllegalArgumentException.class, () -> PipelineModel.load(
                composition, new Composite.Pipeline(List.of(new PipelineStep("chain", Map.of()))), wait));
        assertTrue(itself.getMessage().contains("calls the pipeline itself"), itself.getMessage());
    }

    @Test
    void aStepsRefusalIsThePipelinesAnswer() throws Exception {
        affine("held", "x", "y", 1, 0, true, 0);
        Deployment<Invocation, Tensors> chain = pipeline("chain", new PipelineStep("held", Map.of()));
        chain.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        CompletableFuture<Inference> first = chain.infer(InferenceRequest.of(x(1))); // holds the step's only slot
        awaitInFlight(deployments.get("held"), 1);

        ExecutionException refused = assertThrows(ExecutionException.class,
                () -> chain.infer(InferenceRequest.of(x(2))).get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertInstanceOf(Overloaded.class, refused.getCause(), "the step's 503, not a pipeline failure");
        gate.release();
        assertArrayEquals(new float[] {1}, output(first.get(WAIT_SECONDS, TimeUnit.SECONDS), "y"));
    }

    @Test
    void endingAPipelineRequestEndsTheStepItWaitsFor() throws Exception {
        Deployment<Tensors, Tensors> held = affine("held", "x", "y", 1, 0, true, 4);
        Deployment<Invocation, Tensors> chain = pipeline("chain", new PipelineStep("held", Map.of()));
        chain.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        CompletableFuture<Inference> running = chain.infer(InferenceRequest.of(x(1)));
        awaitInFlight(held, 1);
        CompletableFuture<Inference> waiting = chain.infer(InferenceRequest.of(x(2)));
        awaitQueued(held, 1); // its step waits in the step's queue

        waiting.cancel(false); // the client went away

        assertEquals(0, held.queuedRequests(), "the step's request left the step's queue at once");
        running.completeExceptionally(new DeadlineExceeded("the request's deadline passed")); // the edge's timer
        awaitInFlight(held, 0);
        assertEquals(0, held.ongoingRequests(), "the running step was cancelled too");
        gate.release(2);
    }

    @Test
    void aCallAfterTheDeadlineIsRefusedAndTheContextReachesTheStep() throws Exception {
        affine("double", "x", "y", 2, 1, false, 8);
        Deployment<Invocation, Tensors> chain = pipeline("chain", new PipelineStep("double", Map.of()));
        chain.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);

        ExecutionException late = assertThrows(ExecutionException.class, () -> chain.infer(new InferenceRequest(x(1),
                null, new CallContext("r-1", System.nanoTime() - 1))).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(DeadlineExceeded.class, late.getCause());

        deployments.remove("double");
        ExecutionException gone = assertThrows(ExecutionException.class,
                () -> chain.infer(InferenceRequest.of(x(1))).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, gone.getCause());
        assertTrue(gone.getCause().getMessage().contains("deployment 'double', called by 'chain', does not exist"));
    }

    @Test
    void aRoutedStepCallsTheDeploymentTheLabelNamesWithTheRequestsTensors() throws Exception {
        affine("double", "x", "y", 2, 1, false, 8);
        affine("triple", "x", "y", 3, 0, false, 8);
        Deployment<Tensors, Tensors> detect = engine.deploy(DeploymentSpec.defaults("detect", "fake:")
                .withPredictors(new PredictorSpec(1, 1, false)), ignored -> new Labeler(), WholeRequestIO.instance());
        detect.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        deployments.put("detect", detect);
        PipelineStep route = new PipelineStep(null, new PipelineStep.Route("label", Map.of("pos", "double"),
                "triple"), true, Map.of());
        Deployment<Invocation, Tensors> routed = pipeline("routed", new PipelineStep("detect", Map.of()), route);
        routed.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertArrayEquals(new float[] {5, 7},
                output(routed.infer(InferenceRequest.of(x(2, 3))).get(WAIT_SECONDS, TimeUnit.SECONDS),
                "y"), "label pos: double, given the request's x");
        assertArrayEquals(new float[] {-6},
                output(routed.infer(InferenceRequest.of(x(-2))).get(WAIT_SECONDS, TimeUnit.SECONDS),
                "y"), "any other label: the default, triple");
        ExecutionException mixed = assertThrows(ExecutionException.class,
                () -> routed.infer(InferenceRequest.of(x(2, -3))).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(dev.serval.error.InvalidInput.class, mixed.getCause());
        assertTrue(mixed.getCause().getMessage().contains("route to 'pos' and 'neg'"), mixed.getCause().getMessage());
        assertEquals(List.of("detect", "double", "triple"), ((PipelineModel) routed.replicas().getFirst().model()).steps());

        PipelineStep strict = new PipelineStep(null, new PipelineStep.Route("label", Map.of("pos", "double"), null),
                true, Map.of());
        Deployment<Invocation, Tensors> noDefault = pipeline("strict", new PipelineStep("detect", Map.of()), strict);
        noDefault.serving().get(WAIT_SECONDS, TimeUnit.SECONDS);
        ExecutionException unknown = assertThrows(ExecutionException.class,
                () -> noDefault.infer(InferenceRequest.of(x(-1))).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(dev.serval.error.InvalidInput.class, unknown.getCause());
        assertTrue(unknown.getCause().getMessage().contains("no case for 'neg'; the cases are [pos]"));

        IllegalArgumentException wrongTensor = assertThrows(IllegalArgumentException.class, () -> PipelineModel.load(
                new Composition("bad", Path.of("."), callees), new Composite.Pipeline(List.of(
                        new PipelineStep("detect", Map.of()), new PipelineStep(null,
                                new PipelineStep.Route("lang", Map.of("pos", "double"), null), true, Map.of()))),
                Duration.ofSeconds(1)));
        assertTrue(wrongTensor.getMessage().contains("routes on 'lang', which step 1 ('detect') does not return"),
                wrongTensor.getMessage());
    }

    private static void awaitInFlight(Deployment<?, ?> deployment, int count) {
        await(() -> deployment.inFlight() == count, () -> "in flight " + deployment.inFlight() + ", expected " + count);
    }

    private static void awaitQueued(Deployment<?, ?> deployment, int count) {
        await(() -> deployment.queuedRequests() == count,
                () -> "queued " + deployment.queuedRequests() + ", expected " + count);
    }

    /** Waits (yielding, never sleeping) for a state another thread publishes; fails after 10 s. */
    private static void await(BooleanSupplier done, java.util.function.Supplier<String> otherwise) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(otherwise.get());
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * A fake step: a tensor model taking one FP32 tensor {@code in} and answering {@code out} ({@link #answer}); the
     * probe (no tensors) is answered as it is, unheld.
     */
    private abstract static class StepModel implements Model<Tensors, Tensors> {

        private final ModelSignature signature;

        StepModel(String in, String out, String outType) {
            this.signature = new ModelSignature("fake", List.of(new TensorSignature(in, "FP32", List.of(-1L))),
                    List.of(new TensorSignature(out, outType, List.of(-1L))));
        }

        /** The answer to a real request (not the probe). */
        abstract Tensors answer(Tensors input) throws Exception;

        @Override
        public ModelSignature signature() {
            return signature;
        }

        @Override
        public TensorIO<Tensors, Tensors> io() {
            return WholeRequestIO.instance();
        }

        @Override
        public Predictor<Tensors, Tensors> newPredictor() {
            return new Predictor<>() {
                @Override
                public Tensors predict(Tensors input) throws Exception {
                    return input.size() == 0 ? input : answer(input);
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public Tensors probeInput() {
            return new Tensors(List.of());
        }

        @Override
        public void validate(Tensors input, int index) {
        }

        @Override
        public void close() {
        }
    }

    /** A detector: {@code label} BYTES [n], "pos" for each positive x, "neg" otherwise. */
    private static final class Labeler extends StepModel {

        Labeler() {
            super("x", "label", "BYTES");
        }

        @Override
        Tensors answer(Tensors input) {
            float[] values = (float[]) input.get("x").orElseThrow().data();
            String[] labels = new String[values.length];
            for (int i = 0; i < values.length; i++) {
                labels[i] = values[i] > 0 ? "pos" : "neg";
            }
            return new Tensors(List.of(Tensor.of("label", labels, labels.length)));
        }
    }

    /** {@code out = factor * in + offset} over an FP32 tensor; with a gate, each inference waits for a permit. */
    private static final class Affine extends StepModel {

        private final String in;
        private final String out;
        private final float factor;
        private final float offset;
        private final Semaphore gate;

        Affine(String in, String out, float factor, float offset, Semaphore gate) {
            super(in, out, "FP32");
            this.in = in;
            this.out = out;
            this.factor = factor;
            this.offset = offset;
            this.gate = gate;
        }

        @Override
        Tensors answer(Tensors input) throws InterruptedException {
            if (gate != null) {
                gate.acquire();
            }
            float[] values = (float[]) input.get(in).orElseThrow().data();
            float[] result = new float[values.length];
            for (int i = 0; i < values.length; i++) {
                result[i] = factor * values[i] + offset;
            }
            return new Tensors(List.of(Tensor.of(out, result, result.length)));
        }
    }
}
