package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The default model with a wide session ({@link dev.serval.model.onnx.OnnxModel}): loaded only when there are cores
 * to lend, and giving the same vectors widened as on the predictor's own thread, for short and truncated texts.
 */
class WideSessionTest {

    private static final String[] TEXTS = {"Hi.", "Where is my parcel? It was due on Monday and nothing came.",
        "word ".repeat(400), "Serval warm-up probe."};

    private static TextEmbeddingModel load(LoadOptions options) throws Exception {
        Path dir = Path.of("target", "models");
        ClassLoader loader = WideSessionTest.class.getClassLoader();
        return TextEmbeddingModel.load(ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", dir),
                ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", dir), "last_hidden_state",
                OnnxOptions.none(), options.withMaxLength(256));
    }

    @Test
    void aWidenedPredictorGivesTheSameVectorsAsANarrowOne() throws Exception {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "a wide session needs two processors");
        try (TextEmbeddingModel model = load(LoadOptions.defaults().withIdleIntraOpThreads(2));
                Predictor<String, Embedding> narrow = model.newPredictor();
                Predictor<String, Embedding> wide = model.newPredictor()) {
            assertTrue(model.widens());
            wide.widen(true);
            for (String text : TEXTS) {
                Embedding alone = narrow.predict(text);
                Embedding widened = wide.predict(text);
                assertEquals(alone.tokens(), widened.tokens());
                float[] a = alone.vector();
                float[] b = widened.vector();
                for (int i = 0; i < a.length; i++) {
                    assertEquals(a[i], b[i], 1e-6, "element " + i + " of: " + text);
                }
            }
            wide.widen(false);
            assertArrayEquals(narrow.predict(TEXTS[1]).vector(), wide.predict(TEXTS[1]).vector(),
                    "narrow again: the same session as the other predictor");
        }
    }

    @Test
    void loadsNoWideSessionWithoutCoresToLend() throws Exception {
        try (TextEmbeddingModel model = load(LoadOptions.defaults())) {
            assertFalse(model.widens(), "no idle intra-op threads asked for");
        }
        try (TextEmbeddingModel model = load(LoadOptions.defaults().withIntraOpThreads(2).withIdleIntraOpThreads(2))) {
            assertFalse(model.widens(), "no wider than the predictor's own session");
        }
    }
}
