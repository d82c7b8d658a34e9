package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InvalidInput;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.InputTokens;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.replica.Replica;
import dev.serval.request.CallContext;
import dev.serval.request.TensorIO;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.PredictorSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A text model's tokens as token budgets count them ({@link Predictor#tokens}), on the tiny encoder with a 16-token
 * maximum: the count is what the model reads, the inference given the count's tokenisation answers as one that
 * tokenises itself, and a request of many long texts against a replica is refused at {@code max_tokens_per_request}
 * with its work bounded.
 */
class TextTokensTest {

    /** 600 CJK characters: a token each in MiniLM's tokenizer, some 50 windows of 16 tokens (4 shared) when chunked. */
    private static final String CJK = "東京都の天気は晴れです。".repeat(50);

    private static TextEmbeddingModel load(LongInputs longInputs) throws Exception {
        Path dir = BatchInvarianceTest.tinyModelDirectory();
        return TextEmbeddingModel.load(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"), "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(16).withLongInputs(longInputs));
    }

    @Test
    void aTruncatedTextCountsTheTokensTheModelReadsAndItsInferenceReusesThem() throws Exception {
        try (TextEmbeddingModel model = load(LongInputs.truncate());
                Predictor<String, Embedding> predictor = model.newPredictor()) {
            assertEquals(16, model.maxInputTokens());
            assertEquals(16, predictor.tokens(CJK).count(), "truncated at max_length");
            InputTokens shortText = predictor.tokens("hello world");
            assertEquals(4, shortText.count(), "[CLS] hello world [SEP]");

            assertArrayEquals(predictor.predict("hello world").vector(),
                    predictor.predict("hello world", shortText, () -> false).vector());
            List<Embedding> counted = predictor.predictBatch(List.of("hello world", CJK),
                    List.of(shortText, predictor.tokens(CJK)));
            List<Embedding> uncounted = predictor.predictBatch(List.of("hello world", CJK));
            assertArrayEquals(uncounted.get(0).vector(), counted.get(0).vector());
            assertArrayEquals(uncounted.get(1).vector(), counted.get(1).vector());
        }
    }

    @Test
    void aChunkedTextCountsEveryWindowAndTooManyWindowsAreRefusedWhenCounted() throws Exception {
        try (TextEmbeddingModel model = load(LongInputs.chunk(4, 64));
                TextEmbeddingModel four = load(LongInputs.chunk(4, 4));
                Predictor<String, Embedding> predictor = model.newPredictor();
                Predictor<String, Embedding> refusing = four.newPredictor()) {
            assertEquals(64 * 16, model.maxInputTokens());
            int windows = model.windows(CJK).size();
            InputTokens tokens = predictor.tokens(CJK);
            assertTrue(tokens.count() > 16 * (windows - 1) && tokens.count() <= 16 * windows,
                    tokens.count() + " tokens in " + windows + " windows");
            assertArrayEquals(predictor.predict(CJK).vector(), predictor.predict(CJK, tokens, () -> false).vector());

            InvalidInput refused = assertThrows(InvalidInput.class, () -> refusing.tokens(CJK));
            assertTrue(refused.getMessage().endsWith("this model runs at most 4 windows per text "
                    + "(max_chunks_per_input)"), refused.getMessage());
        }
    }

    @Test
    void aRequestOfManyLongTextsIsRefusedAtMaxTokensPerRequestAndItsWorkIsBounded() throws Exception {
        DeploymentSpec spec = DeploymentSpec.defaults("attack", "tiny")
                .withAdmission(AdmissionSpec.DEFAULTS.withMaxTokensPerRequest(2_000))
                .withPredictors(new PredictorSpec(2, 1, false));
        List<String> unhealthy = Collections.synchronizedList(new ArrayList<>());
        try (TextEmbeddingModel loaded = load(LongInputs.chunk(4, 64))) {
            Counting model = new Counting(loaded);
            Replica<String, Embedding> replica = Replica.start(spec, 0, model,
                    Thread.ofPlatform().daemon(true).name("serval-attack-r0-", 0).factory(), System::nanoTime,
                    DeploymentMetrics.discarding("attack"), unhealthy::add);
            try {
                model.tokenised.set(0);
                model.ran.set(0);
                List<String> attack = Collections.nCopies(200, CJK); // some 120,000 tokens

                ExecutionException failure = assertThrows(ExecutionException.class,
                        () -> replica.run(attack, CallContext.NO_DEADLINE).get(30, TimeUnit.SECONDS));

                InvalidInput refused = assertInstanceOf(InvalidInput.class, failure.getCause(), "a 400");
                assertTrue(refused.getMessage().startsWith("the request holds more tokens than the 2000 model "
                        + "'attack' reads per request (max_tokens_per_request): "), refused.getMessage());
                assertTrue(model.tokenised.get() <= 6, model.tokenised.get() + " of 200 texts tokenised");
                assertTrue(model.ran.get() <= 4, model.ran.get() + " of 200 texts run");
                awaitNoQueuedInputs(replica); // the request gives its places back right after it fails

                assertEquals(1, replica.run(List.of("a short text"), CallContext.NO_DEADLINE)
                        .get(30, TimeUnit.SECONDS).size(), "the replica serves on");
                assertEquals(List.of(), unhealthy, "a client error, not the replica's");
            } finally {
                assertTrue(replica.close(Duration.ofSeconds(10)));
            }
        }
    }

    /** Waits (up to 10 s, else fails) until {@code replica} holds no queued input. */
    private static void awaitNoQueuedInputs(Replica<?, ?> replica) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (replica.queuedInputs() > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(replica.queuedInputs() + " inputs still queued: the rest was not dropped");
            }
            Thread.yield();
        }
    }

    /** The text model, counting the texts its predictors tokenise ahead of their inference and the texts they run. */
    private static final class Counting implements Model<String, Embedding> {
        final AtomicInteger tokenised = new AtomicInteger();
        final AtomicInteger ran = new AtomicInteger();
        private final Model<String, Embedding> model;

        Counting(Model<String, Embedding> model) {
            this.model = model;
        }

        @Override
        public Predictor<String, Embedding> newPredictor() {
            Predictor<String, Embedding> predictor = model.newPredictor();
            return new Predictor<>() {
                @Override
                public Embedding predict(String input) throws Exception {
                    ran.incrementAndGet();
                    return predictor.predict(input);
                }

                @Override
                public InputTokens tokens(String input) throws Exception {
                    tokenised.incrementAndGet();
                    return predictor.tokens(input);
                }

                @Override
                public Embedding predict(String input, InputTokens tokens, BooleanSupplier abandoned)
                        throws Exception {
                    ran.incrementAndGet();
                    return predictor.predict(input, tokens, abandoned);
                }

                @Override
                public List<Embedding> predictBatch(List<String> inputs, List<InputTokens> tokens) throws Exception {
                    ran.addAndGet(inputs.size());
                    return predictor.predictBatch(inputs, tokens);
                }

                @Override
                public void close() {
                    predictor.close();
                }
            };
        }

        @Override
        public long maxInputTokens() {
            return model.maxInputTokens();
        }

        @Override
        public BatchingDecision batching() {
            return model.batching();
        }

        @Override
        public ModelSignature signature() {
            return model.signature();
        }

        @Override
        public TensorIO<String, Embedding> io() {
            return model.io();
        }

        @Override
        public String probeInput() {
            return model.probeInput();
        }

        @Override
        public void validate(String input, int index) {
            model.validate(input, index);
        }

        @Override
        public void close() {
        }
    }
}
