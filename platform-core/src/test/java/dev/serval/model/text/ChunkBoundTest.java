package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.InvalidInput;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The bounds of {@code long_inputs: chunk}, on the tiny encoder with a 16-token maximum and 4 tokens of overlap: each
 * window after the first adds 10 tokens of text, and one sentence below is 12 tokens.
 */
class ChunkBoundTest {

    private static final String SENTENCE = "the quick brown fox jumps over the lazy dog again and again ";

    private static TextEmbeddingModel load(LongInputs longInputs) throws Exception {
        Path dir = BatchInvarianceTest.tinyModelDirectory();
        return TextEmbeddingModel.load(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"), "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(16).withLongInputs(longInputs));
    }

    @Test
    void aHugeTextIsRefusedByValidationBeforeItIsTokenisedNamingTheLimit() throws Exception {
        try (TextEmbeddingModel model = load(LongInputs.chunk(4))) {
            String huge = "x".repeat(8 * 1024 * 1024);

            InvalidInput refused = assertThrows(InvalidInput.class, () -> model.validate(huge, 3));

            assertEquals("text 3 is 8388608 characters long; with long_inputs: chunk this model takes at most 16384 "
                    + "characters per text (max_chunks_per_input 64 windows of 16 tokens, at most 16 characters per "
                    + "token)", refused.getMessage());
            model.validate("x".repeat(16_384), 0); // at the bound: taken
        }
    }

    @Test
    void aTextThatSplitsIntoMoreWindowsThanTheBoundIsRefusedBeforeAnyWindowRuns() throws Exception {
        String long120Windows = SENTENCE.repeat(100); // 1,200 tokens: about 120 windows, 6,000 characters
        try (TextEmbeddingModel model = load(LongInputs.chunk(4));
                Predictor<String, Embedding> predictor = model.newPredictor()) {
            model.validate(long120Windows, 0); // within the character bound: only tokenising tells
            AtomicInteger asked = new AtomicInteger();

            InvalidInput refused = assertThrows(InvalidInput.class,
                    () -> predictor.predict(long120Windows, () -> asked.incrementAndGet() < 0));

            assertTrue(refused.getMessage().endsWith("windows of 16 tokens; this model runs at most 64 windows per text "
                    + "(max_chunks_per_input)"), refused.getMessage());
            assertEquals(0, asked.get(), "no window ran, so abandonment was never even checked");
        }
    }

    @Test
    void theBoundIsASetting() throws Exception {
        String fiveWindows = SENTENCE.repeat(4);
        try (TextEmbeddingModel four = load(LongInputs.chunk(4, 4));
                TextEmbeddingModel eight = load(LongInputs.chunk(4, 8));
                Predictor<String, Embedding> refusing = four.newPredictor();
                Predictor<String, Embedding> taking = eight.newPredictor()) {
            assertTrue(four.windows(fiveWindows).size() > 4 && four.windows(fiveWindows).size() <= 8,
                    "windows: " + four.windows(fiveWindows).size());
            assertThrows(InvalidInput.class, () -> refusing.predict(fiveWindows));
            assertEquals(16, taking.predict(fiveWindows).vector().length);
            assertThrows(InvalidInput.class, () -> four.validate("x".repeat(4 * 16 * 16 + 1), 0));
        }
        assertThrows(IllegalArgumentException.class, () -> LongInputs.chunk(4, 0));
    }

    @Test
    void aTextWhoseRequestIsAbandonedStopsRunningItsWindows() throws Exception {
        String fortyWindows = SENTENCE.repeat(33);
        try (TextEmbeddingModel model = load(LongInputs.chunk(4));
                Predictor<String, Embedding> predictor = model.newPredictor()) {
            int windows = model.windows(fortyWindows).size();
            assertTrue(windows > 2 * TextModel.WINDOWS_PER_INFERENCE && windows <= 64, "windows: " + windows);
            AtomicInteger asked = new AtomicInteger();

            Embedding result = predictor.predict(fortyWindows, () -> asked.incrementAndGet() > 1);

            assertNull(result, "an abandoned text has no result");
            assertEquals(2, asked.get(), "stopped at the first check after its request was abandoned");
            assertFalse(predictor.predict(fortyWindows, () -> false) == null, "a text still wanted runs to the end");
        }
    }

    @Test
    void underChunkingTextsRunAloneSoThatEachCanBeStoppedOnItsOwn() throws Exception {
        try (TextEmbeddingModel chunking = load(LongInputs.chunk(4));
                TextEmbeddingModel truncating = load(LongInputs.truncate())) {
            assertTrue(truncating.batching().batched(), "the tiny encoder batches texts when it truncates");
            assertFalse(chunking.batching().batched(), chunking.batching().reason());
            assertTrue(chunking.batching().reason().contains("windows together"), chunking.batching().reason());
            assertFalse(chunking.batching().reason().contains("batch-size probe"), "texts run alone: nothing to size");
        }
    }
}
