package dev.serval.deployment;

import static dev.serval.deployment.AwaitState.awaitState;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InvalidInput;
import dev.serval.health.FailureMonitor;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.model.TokenVectors;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.TensorIO;
import dev.serval.request.TextIO;
import dev.serval.spec.CacheSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.ModelReference;
import dev.serval.spec.PredictorSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A deployment of a text model with its result cache: per input (partial hits in order, misses run together), exact
 * keys (a served model's results are never another's), single flight (identical texts in flight run once; a leader's
 * end is not its waiters'), and off when told.
 */
class ResultCacheDeploymentTest {

    private static final long WAIT_SECONDS = 10;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ServingEngine engine = new ServingEngine(Duration.ofMillis(50), System::nanoTime,
            InstantSource.system(), registry, FailureMonitor.Settings.defaults());
    private final List<TextModel<?>> models = new CopyOnWriteArrayList<>();
    private final ExecutorService callers = Executors.newFixedThreadPool(8);

    @AfterEach
    void closeAll() {
        models.forEach(model -> model.gate.release(10_000));
        callers.shutdownNow();
        engine.close();
    }

    /** One replica of {@code version} with one predictor. */
    private static DeploymentSpec spec(String version) {
        DeploymentSpec defaults = DeploymentSpec.defaults("cached", "fake:");
        return defaults.withVersion(version).withPredictors(new PredictorSpec(1, 1, true))
                .withAdmission(defaults.admission().withMaxOngoingRequests(64).withMaxQueuedRequests(64));
    }

    private <O> Deployment<String, O> ready(DeploymentSpec spec, Function<DeploymentSpec, TextModel<O>> loader) {
        Deployment<String, O> deployment = engine.deploy(spec, loader::apply, ModelKind.TEXT_EMBEDDING);
        awaitState(deployment, DeploymentState.READY);
        return deployment;
    }

    private TextModel<String> tagged(String tag) {
        TextModel<String> model = new TextModel<>(text -> tag + text);
        models.add(model);
        return model;
    }

    private static Tensors texts(String... texts) {
        return new Tensors(List.of(Tensor.of("text", texts, texts.length)));
    }

    private static List<String> outputs(Inference answer) {
        return List.of((String[]) answer.outputs().get("out").orElseThrow().data());
    }

    private double count(String result) {
        return registry.get("serval.cache.requests").tags("deployment", "cached", "result", result).counter().count();
    }

    @Test
    void answersPartialHitsInOrderAndRunsOnlyTheMisses() throws Exception {
        TextModel<Embedding> model = new TextModel<>(ResultCacheDeploymentTest::embedding);
        models.add(model);
        Deployment<String, Embedding> deployment = ready(spec("1"), ignored -> model);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            texts.add("text " + i);
        }
        deployment.embed(texts.subList(0, 20), 0, CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS);
        model.ran.clear();

        List<Embedding> answer = deployment.embed(texts, 0, CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(texts.subList(20, 32), model.ran, "only the 12 misses ran");
        assertEquals(32, answer.size());
        for (int i = 0; i < 32; i++) {
            assertArrayEquals(embedding(texts.get(i)).vector(), answer.get(i).vector(), "row " + i);
        }
        assertEquals(20, count("hit"));
        assertEquals(32, count("miss"), "20 the first time, 12 the second");
    }

    @Test
    void aHitIsBitIdenticalToTheMiss() throws Exception {
        TextModel<Embedding> model = new TextModel<>(ResultCacheDeploymentTest::embedding);
        models.add(model);
        Deployment<String, Embedding> deployment = ready(spec("1"), ignored -> model);

        Embedding miss = deployment.embed(List.of("gg"), 0, CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS)
                .getFirst();
        Embedding hit = deployment.embed(List.of("gg"), 0, CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS)
                .getFirst();

        assertEquals(1, count("hit"));
        assertEquals(miss.tokens(), hit.tokens());
        assertEquals(miss.vector().length, hit.vector().length);
        for (int i = 0; i < miss.vector().length; i++) {
            assertEquals(Float.floatToRawIntBits(miss.vector()[i]), Float.floatToRawIntBits(hit.vector()[i]));
        }
    }

    @Test
    void oipInferHitsTooAndAnswersWithTheVersionThatMadeTheResults() throws Exception {
        TextModel<String> model = tagged("v1:");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        deployment.infer(InferenceRequest.of(texts("a", "b"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        model.ran.clear();

        Inference answer = deployment.infer(InferenceRequest.of(texts("b", "c", "a")))
                .get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(List.of("v1:b", "v1:c", "v1:a"), outputs(answer));
        assertEquals("1", answer.version());
        assertEquals(3, answer.inputs());
        assertEquals(List.of("c"), model.ran);
    }

    @Test
    void aRollingUpdateNeverServesTheOldVersionsResultsForTheNew() throws Exception {
        TextModel<String> v1 = tagged("v1:");
        TextModel<String> v2 = tagged("v2:");
        Deployment<String, String> deployment = ready(spec("1"),
                s -> s.version().equals("1") ? v1 : v2);
        assertEquals(List.of("v1:a"), outputs(deployment.infer(InferenceRequest.of(texts("a")))
                .get(WAIT_SECONDS, TimeUnit.SECONDS)));

        deployment.update(spec("2")).get(WAIT_SECONDS, TimeUnit.SECONDS);
        // While both versions serve, and after: every answer is one version's, and names it.
        boolean onlyV2 = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!onlyV2) {
            assertTrue(System.nanoTime() < deadline, "version 2 never served alone");
            onlyV2 = deployment.replicas().stream().allMatch(replica -> replica.version().equals("2"));
            Inference answer = deployment.infer(InferenceRequest.of(texts("a", "b")))
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            String tag = "v" + answer.version() + ":";
            assertEquals(List.of(tag + "a", tag + "b"), outputs(answer));
        }
        Inference after = deployment.infer(InferenceRequest.of(texts("a"))).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(List.of("v2:a"), outputs(after));
        assertEquals("2", after.version());
    }

    @Test
    void settingsThatChangeTheOutputNeverShareAnEntry() throws Exception {
        // Same version, another max_length: new replicas, whose results are their own.
        Deployment<String, String> deployment = ready(spec("1"),
                s -> tagged("max_length=" + s.model().maxLength() + ":"));
        assertEquals(List.of("max_length=0:a"), outputs(deployment.infer(InferenceRequest.of(texts("a")))
                .get(WAIT_SECONDS, TimeUnit.SECONDS)));
        ModelReference shorter = new ModelReference("fake:", 16, deployment.spec().model().longInputs(),
                deployment.spec().model().chunkOverlap(), deployment.spec().model().chunkReduction(),
                deployment.spec().model().maxChunksPerInput());

        deployment.update(spec("1").withModel(shorter)).get(WAIT_SECONDS, TimeUnit.SECONDS);
        awaitUntil(() -> deployment.replicas().stream().allMatch(r -> r.served().model().maxLength() == 16)
                && !deployment.replicas().isEmpty(), "the new replicas serving alone");

        assertEquals(List.of("max_length=16:a"), outputs(deployment.infer(InferenceRequest.of(texts("a")))
                .get(WAIT_SECONDS, TimeUnit.SECONDS)));
    }

    @Test
    void identicalTextsInFlightRunOnceAndEachRequestIsAnswered() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        int requests = 8;
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<List<String>>> answers = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            CompletableFuture<List<String>> answer = new CompletableFuture<>();
            answers.add(answer);
            callers.execute(() -> {
                try {
                    start.await();
                    deployment.infer(InferenceRequest.of(texts("wait-gg"))).whenComplete((inference, failure) -> {
                        if (failure != null) {
                            answer.completeExceptionally(failure);
                        } else {
                            answer.complete(outputs(inference));
                        }
                    });
                } catch (Throwable e) {
                    answer.completeExceptionally(e);
                }
            });
        }
        start.countDown();
        awaitUntil(() -> count("miss") + count("coalesced") + count("hit") == requests, "every request looked up");
        model.gate.release(10_000);

        for (CompletableFuture<List<String>> answer : answers) {
            assertEquals(List.of("wait-gg"), answer.get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        assertEquals(1, model.ran.stream().filter("wait-gg"::equals).count(), "one inference: " + model.ran);
        assertEquals(1, count("miss"));
        assertEquals(requests - 1, count("coalesced") + count("hit"));
    }

    @Test
    void aCancelledFirstCallerCancelsNoneOfItsWaiters() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        // The one predictor is busy, so the leader's text waits in the replica's queue.
        CompletableFuture<Inference> busy = deployment.infer(InferenceRequest.of(texts("wait-busy")));
        model.awaitWaiting(1);
        CompletableFuture<Inference> leader = deployment.infer(InferenceRequest.of(texts("wait-x")));
        List<CompletableFuture<Inference>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiters.add(deployment.infer(InferenceRequest.of(texts("wait-x", "y" + i))));
        }
        assertEquals(3, count("coalesced"));

        leader.cancel(false);
        model.gate.release(10_000);

        for (int i = 0; i < 3; i++) {
            assertEquals(List.of("wait-x", "y" + i), outputs(waiters.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS)));
        }
        busy.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertTrue(leader.isCancelled());
    }

    @Test
    void aWaiterOutlivesItsLeadersDeadline() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        CompletableFuture<Inference> busy = deployment.infer(InferenceRequest.of(texts("wait-busy")));
        model.awaitWaiting(1);
        // The leader's deadline has passed by the time a predictor could take it: the engine drops it unrun.
        CompletableFuture<Inference> leader = deployment.infer(new InferenceRequest(texts("wait-x"), null,
                new CallContext("leader", System.nanoTime())));
        CompletableFuture<Inference> waiter = deployment.infer(InferenceRequest.of(texts("wait-x")));
        assertEquals(1, count("coalesced"));

        model.gate.release(10_000);

        assertEquals(List.of("wait-x"), outputs(waiter.get(WAIT_SECONDS, TimeUnit.SECONDS)));
        assertTrue(leader.isCompletedExceptionally());
        busy.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void refusesATextTheModelRefusesNamingItsPlaceInTheRequest() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        deployment.infer(InferenceRequest.of(texts("a"))).get(WAIT_SECONDS, TimeUnit.SECONDS);

        InvalidInput refused = assertThrows(InvalidInput.class,
                () -> deployment.infer(InferenceRequest.of(texts("a", "bad"))));

        assertEquals("text 1 is bad", refused.getMessage());
        assertEquals(1, deployment.cache().entries(), "nothing stored for the refused text");
    }

    @Test
    void cacheOffRunsEveryText() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1").withCache(CacheSpec.DEFAULTS.off()),
                ignored -> model);

        deployment.infer(InferenceRequest.of(texts("a"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        deployment.infer(InferenceRequest.of(texts("a"))).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(List.of("a", "a"), model.ran);
        assertFalse(deployment.cache().active());
        assertEquals(0, count("hit") + count("miss"), "no lookups while off");
    }

    @Test
    void turningTheCacheOffAndOnInPlaceKeepsTheReplicas() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1"), ignored -> model);
        deployment.infer(InferenceRequest.of(texts("a"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
        long replica = deployment.replicas().getFirst().id();
        assertTrue(deployment.cache().bytes() > 0);

        deployment.update(spec("1").withCache(CacheSpec.DEFAULTS.off())).get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertFalse(deployment.cache().active());
        deployment.update(spec("1")).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertTrue(deployment.cache().active());
        assertEquals(0, deployment.cache().bytes(), "turned on empty");
        assertEquals(replica, deployment.replicas().getFirst().id(), "no replica replaced");
        assertEquals(CacheSpec.DEFAULT_MAX_BYTES, deployment.cache().grantedBytes());
    }

    @Test
    void aTensorKindHasNoCache() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = engine.deploy(spec("1"), ignored -> model, ModelKind.TENSOR);
        awaitState(deployment, DeploymentState.READY);

        assertFalse(deployment.cache().active());
        assertTrue(registry.find("serval.cache.requests").counters().isEmpty(), "no cache meters");
    }

    @Test
    void publishesTheCacheBytesAndEvictionsAsMeters() throws Exception {
        TextModel<String> model = tagged("");
        Deployment<String, String> deployment = ready(spec("1").withCache(new CacheSpec(true, CacheSpec.MIN_BYTES)),
                ignored -> model);
        String[] many = new String[200];
        for (int i = 0; i < many.length; i++) {
            many[i] = "text " + i + " ".repeat(300);
        }

        deployment.infer(InferenceRequest.of(texts(many))).get(WAIT_SECONDS, TimeUnit.SECONDS);

        double bytes = registry.get("serval.cache.bytes").tags("deployment", "cached").gauge().value();
        assertTrue(bytes > 0 && bytes <= CacheSpec.MIN_BYTES, "bytes " + bytes);
        assertTrue(registry.get("serval.cache.evictions").tags("deployment", "cached").counter().count() > 0);
        assertEquals(deployment.cache().bytes(), (long) bytes);
    }

    private static void awaitUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    void tokenRequestsNeitherReadNorFillTheCacheAndStoredEmbeddingsHoldNoTokenVectors() throws Exception {
        TextModel<Embedding> model = new TextModel<>(ResultCacheDeploymentTest::withTokens);
        models.add(model);
        Deployment<String, Embedding> deployment = ready(spec("1"), ignored -> model);
        deployment.embed(List.of("a", "b"), 0, CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS);
        model.ran.clear();

        List<Embedding> tokens = deployment.embedTokens(List.of("a", "b"), CallContext.NONE)
                .get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(List.of("a", "b"), model.ran, "both ran, though cached pooled");
        assertEquals(1, tokens.get(0).tokenVectors().tokens());
        model.ran.clear();
        List<Embedding> pooled = deployment.embed(List.of("a", "c"), 0, CallContext.NONE)
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(List.of("c"), model.ran, "the token request left the pooled entry alone");
        assertEquals(null, pooled.get(0).tokenVectors(), "a cached answer holds no inference's output");
    }

    @Test
    void aTokenRequestForATextWithoutTokenVectorsIsRefusedNamingIt() throws Exception {
        TextModel<Embedding> model = new TextModel<>(text -> text.startsWith("long") ? embedding(text) : withTokens(text));
        models.add(model);
        Deployment<String, Embedding> deployment = ready(spec("1"), ignored -> model);

        ExecutionException failed = assertThrows(ExecutionException.class, () -> deployment
                .embedTokens(List.of("short", "long one"), CallContext.NONE).get(WAIT_SECONDS, TimeUnit.SECONDS));

        InvalidInput refused = assertInstanceOf(InvalidInput.class, failed.getCause());
        assertTrue(refused.getMessage().startsWith("text 1 has no token embeddings: model 'cached' read it in windows"),
                refused.getMessage());
    }

    /** {@link #embedding} with one token vector, as a model that leaves its tokens answers. */
    private static Embedding withTokens(String text) {
        Embedding pooled = embedding(text);
        return new Embedding(pooled.vector(), 1, 1f, new TokenVectors(pooled.vector(), 0, 1, pooled.vector().length));
    }

    private static Embedding embedding(String text) {
        float[] vector = new float[8];
        for (int i = 0; i < vector.length; i++) {
            vector[i] = (float) Math.sin(text.hashCode() * 31.0 + i);
        }
        return new Embedding(vector, text.length());
    }

    /**
     * A text model answering {@code result} of each text; texts starting with {@code "wait"} block on {@link #gate};
     * {@code "bad"} is refused by validation. Records the texts it ran, the probe left out.
     */
    static final class TextModel<O> implements Model<String, O> {

        final Semaphore gate = new Semaphore(0);
        final AtomicInteger waiting = new AtomicInteger();
        final List<String> ran = new CopyOnWriteArrayList<>();
        private final Function<String, O> result;

        TextModel(Function<String, O> result) {
            this.result = result;
        }

        void awaitWaiting(int count) {
            awaitUntil(() -> waiting.get() >= count, count + " texts waiting in the model");
        }

        @Override
        public ModelSignature signature() {
            return new ModelSignature("fake", List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                    List.of(new TensorSignature("out", "BYTES", List.of(-1L, 8L))));
        }

        @Override
        public TensorIO<String, O> io() {
            return new TensorIO<>() {
                @Override
                public List<String> inputs(Tensors request) {
                    return TextIO.texts(request);
                }

                @Override
                public Tensors outputs(List<O> outputs) {
                    String[] data = outputs.stream().map(String::valueOf).toArray(String[]::new);
                    return new Tensors(List.of(Tensor.of("out", data, data.length)));
                }
            };
        }

        @Override
        public Predictor<String, O> newPredictor() {
            return new Predictor<>() {
                @Override
                public O predict(String input) throws Exception {
                    if (!input.equals("probe")) {
                        ran.add(input);
                    }
                    if (input.startsWith("wait")) {
                        waiting.incrementAndGet();
                        gate.acquire();
                    }
                    return result.apply(input);
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
            if (input.equals("bad")) {
                throw new InvalidInput("text " + index + " is bad");
            }
        }

        @Override
        public void close() {
        }
    }
}
