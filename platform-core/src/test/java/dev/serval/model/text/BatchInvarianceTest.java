package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** How each model is classified at load, and what batching then returns. */
class BatchInvarianceTest {

    static final Path MODELS = Path.of("target", "models");

    /** The quantised default model's files. */
    static Path[] minilm() {
        ClassLoader loader = BatchInvarianceTest.class.getClassLoader();
        return new Path[] {
            ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", MODELS),
            ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", MODELS)};
    }

    /** The tiny FP32 encoder (scripts/make_tiny_encoder.py) with MiniLM's tokenizer, in a directory of its own. */
    static Path tinyModelDirectory() throws Exception {
        Path dir = MODELS.resolve("tiny-fp32-encoder");
        Files.createDirectories(dir);
        Files.copy(Path.of("src", "test", "resources", "models", "tiny-fp32-encoder", "model.onnx"), dir.resolve("model.onnx"),
                StandardCopyOption.REPLACE_EXISTING);
        Files.copy(minilm()[1], dir.resolve("tokenizer.json"), StandardCopyOption.REPLACE_EXISTING);
        return dir;
    }

    static final List<String> MIXED = List.of(
            "Hi.",
            "How do I reset my password?",
            "The package arrived broken and nobody from support has answered my emails for three days now.",
            "ok",
            "Zürich und Genève 🎉",
            "word ".repeat(60).trim(),
            "Where is my order #1234?");

    @Test
    void theQuantisedDefaultModelIsRowCoupledAndRunsEveryTextAlone() throws Exception {
        Path[] files = minilm();
        try (TextEmbeddingModel model = TextEmbeddingModel.load(files[0], files[1], "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256))) {
            BatchingDecision batching = model.batching();
            assertFalse(batching.batched());
            assertTrue(batching.batchInvariant());
            assertTrue(batching.reason().contains("DynamicQuantizeLinear"), batching.reason());
        }
    }

    @Test
    void withInvarianceSwitchedOffTheDefaultModelBatchesAndSaysItIsNotInvariant() throws Exception {
        Path[] files = minilm();
        try (TextEmbeddingModel model = TextEmbeddingModel.load(files[0], files[1], "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256).withBatchInvariance(false))) {
            assertTrue(model.batching().batched());
            assertFalse(model.batching().batchInvariant());
            assertTrue(model.batching().reason().contains("batch invariance is off"), model.batching().reason());
            assertProbed(model.batching());
        }
    }

    @Test
    void aModelRunningEveryTextAloneIsNotProbed() throws Exception {
        Path[] files = minilm();
        try (TextEmbeddingModel model = TextEmbeddingModel.load(files[0], files[1], "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256))) {
            assertEquals(1, model.batching().preferredBatch());
            assertFalse(model.batching().reason().contains("batch-size probe"), model.batching().reason());
        }
    }

    /** The probe ran, says what it measured, and decided whether batching pays. */
    static void assertProbed(BatchingDecision batching) {
        String reason = batching.reason();
        assertTrue(reason.contains("; batch-size probe, texts/s at batch 1: "), reason);
        if (batching.preferredBatch() == BatchingDecision.NO_PREFERENCE) {
            assertTrue(reason.endsWith("so max_batch_size limits batches"), reason);
        } else {
            assertEquals(1, batching.preferredBatch(), reason);
            assertTrue(reason.endsWith("batching does not pay: preferred batch 1"), reason);
        }
        assertTrue(batching.batchLimit(32) >= 1 && batching.batchLimit(32) <= 32, reason);
        assertEquals(1, batching.batchLimit(1));
    }

    @Test
    void theTinyFp32EncoderHasIndependentRowsAndBatchesWithTheSameAnswers() throws Exception {
        Path dir = tinyModelDirectory();
        try (TextEmbeddingModel model = TextEmbeddingModel.load(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"),
                "last_hidden_state", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256))) {
            BatchingDecision batching = model.batching();
            assertTrue(batching.batched(), batching.reason());
            assertTrue(batching.batchInvariant());
            assertTrue(batching.reason().startsWith("no row-coupling operator"), batching.reason());
            assertProbed(batching);

            AtomicLong inferences = new AtomicLong();
            AtomicLong padding = new AtomicLong();
            AtomicLong real = new AtomicLong();
            try (Predictor<String, Embedding> predictor = model.newPredictor((inputs, realTokens, paddedTokens) -> {
                inferences.incrementAndGet();
                real.addAndGet(realTokens);
                padding.addAndGet(paddedTokens);
            })) {
                List<Embedding> batched = predictor.predictBatch(MIXED);
                for (int i = 0; i < MIXED.size(); i++) {
                    Embedding alone = predictor.predict(MIXED.get(i));
                    assertEquals(alone.tokens(), batched.get(i).tokens(), "tokens of " + MIXED.get(i));
                    for (int d = 0; d < alone.vector().length; d++) {
                        assertEquals(alone.vector()[d], batched.get(i).vector()[d], 1e-5, "text " + i + " element " + d);
                    }
                }
            }
            assertTrue(inferences.get() > 1 && inferences.get() < MIXED.size(), "texts grouped by length: " + inferences);
            assertTrue(padding.get() < real.get() / 4, "padding stays small: " + padding + " of " + real);
        }
    }
}
