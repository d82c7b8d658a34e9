package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.Encoding;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Long texts under the {@code chunk} policy, on the tiny encoder with a 16-token maximum and 4 tokens of overlap. */
class ChunkingTest {

    private static final String LONG = "the quick brown fox jumps over the lazy dog again and again ".repeat(6).trim();
    private static final String SHORT = "a short text";

    private static TextEmbeddingModel load(LongInputs longInputs) throws Exception {
        Path dir = BatchInvarianceTest.tinyModelDirectory();
        return TextEmbeddingModel.load(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"), "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(16).withLongInputs(longInputs));
    }

    @Test
    void splitsALongTextIntoOverlappingWindowsOfTheMaximumLength() throws Exception {
        try (TextEmbeddingModel model = load(LongInputs.chunk(4))) {
            List<Encoding> windows = model.windows(LONG);
            assertTrue(windows.size() > 3, "windows: " + windows.size());
            for (int i = 0; i < windows.size(); i++) {
                long[] ids = windows.get(i).getIds();
                assertTrue(ids.length <= 16, "window " + i + " has " + ids.length + " tokens");
                assertEquals(101, ids[0], "[CLS] opens every window");
                assertEquals(102, ids[ids.length - 1], "[SEP] closes every window");
            }
            for (int i = 0; i + 1 < windows.size(); i++) {
                long[] previous = windows.get(i).getIds();
                long[] next = windows.get(i + 1).getIds();
                long[] tail = Arrays.copyOfRange(previous, previous.length - 1 - 4, previous.length - 1);
                long[] head = Arrays.copyOfRange(next, 1, 1 + 4);
                assertArrayEquals(tail, head, "windows " + i + " and " + (i + 1) + " share 4 tokens");
            }
        }
    }

    @Test
    void aLongTextsEmbeddingIsTheRenormalisedMeanOfItsWindows() throws Exception {
        try (TextEmbeddingModel model = load(LongInputs.chunk(4));
                TextModel<String, Embedding>.TextPredictor predictor = (TextModel<String, Embedding>.TextPredictor) model.newPredictor()) {
            List<Encoding> windows = model.windows(LONG);
            Embedding[] parts = new Embedding[windows.size()];
            double[] mean = new double[16];
            int tokens = 0;
            for (int i = 0; i < parts.length; i++) {
                parts[i] = predictor.run(windows.get(i));
                tokens += parts[i].tokens();
                for (int d = 0; d < 16; d++) {
                    mean[d] += parts[i].vector()[d] / parts.length;
                }
            }
            double norm = Math.sqrt(Arrays.stream(mean).map(v -> v * v).sum());

            Embedding chunked = predictor.predict(LONG);

            assertEquals(tokens, chunked.tokens(), "usage counts the tokens of every window");
            for (int d = 0; d < 16; d++) {
                assertEquals(mean[d] / norm, chunked.vector()[d], 1e-6, "element " + d);
            }
        }
    }

    @Test
    void aTextWithinTheMaximumGetsExactlyWhatTruncationGives() throws Exception {
        try (TextEmbeddingModel chunking = load(LongInputs.chunk(4));
                TextEmbeddingModel truncating = load(LongInputs.truncate());
                Predictor<String, Embedding> a = chunking.newPredictor();
                Predictor<String, Embedding> b = truncating.newPredictor()) {
            assertEquals(1, chunking.windows(SHORT).size());
            assertArrayEquals(b.predict(SHORT).vector(), a.predict(SHORT).vector(), 1e-6f);
            assertEquals(16, b.predict(LONG).tokens(), "the default policy truncates at the maximum");
        }
    }

    @Test
    void refusesAnOverlapOfMoreThanHalfAWindow() {
        assertThrows(IllegalArgumentException.class, () -> load(LongInputs.chunk(9)));
    }
}
