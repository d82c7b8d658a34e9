package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import dev.serval.model.ChunkReduction;
import dev.serval.model.Classification;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.model.TinyModels;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The text-classification kind on the toy classifier of {@code scripts/make_tiny_models.py} (its own WordPiece
 * tokenizer, no {@code token_type_ids}, three labels), against the scores numpy computed for fixed texts.
 */
class TextClassificationModelTest {

    private static final Path MODEL = TinyModels.file("tiny-classifier", "model.onnx");
    private static final Path TOKENIZER = TinyModels.file("tiny-classifier", "tokenizer.json");
    private static final JsonNode EXPECTED = TinyModels.expected("tiny-classifier");
    private static final int MAX_LENGTH = EXPECTED.get("max_length").asInt();
    /** Negative at the start, then long neutral and neutral-to-positive stretches: its windows disagree. */
    private static final String LONG = "this movie was terrible, awful, bad! " + "the quick brown fox jumps over the lazy dog, ok. ".repeat(4)
            + "but the food was good";

    private static TextClassificationModel model;

    @BeforeAll
    static void load() throws Exception {
        model = load(LongInputs.truncate(), ChunkReduction.MEAN);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static TextClassificationModel load(LongInputs longInputs, ChunkReduction reduction) throws Exception {
        return TextClassificationModel.load(MODEL, TOKENIZER, labels(), "logits", OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(MAX_LENGTH).withLongInputs(longInputs)
                        .withChunkReduction(reduction));
    }

    private static List<String> labels() {
        List<String> labels = new ArrayList<>();
        EXPECTED.get("labels").forEach(label -> labels.add(label.asText()));
        return labels;
    }

    @Test
    void theTokenizerGivesTheIdsTheScriptComputedWith() throws Exception {
        try (HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(TOKENIZER)
                .optAddSpecialTokens(true).optTruncation(true).optMaxLength(MAX_LENGTH).optPadding(false).build()) {
            for (JsonNode expected : EXPECTED.get("cases")) {
                long[] ids = new long[expected.get("ids").size()];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = expected.get("ids").get(i).asLong();
                }
                assertArrayEquals(ids, tokenizer.encode(expected.get("text").asText()).getIds(), expected.get("text").asText());
            }
        }
    }

    @Test
    void givesTheScoresNumpyComputesForEveryText() throws Exception {
        assertEquals(List.of("negative", "neutral", "positive"), model.labels());
        try (Predictor<String, Classification> predictor = model.newPredictor()) {
            for (JsonNode expected : EXPECTED.get("cases")) {
                String text = expected.get("text").asText();
                Classification classification = predictor.predict(text);
                assertArrayEquals(TinyModels.floats(expected.get("scores")), classification.scores(), 1e-5f, text);
                assertEquals(expected.get("label").asText(), model.labels().get(classification.labelIndex()), text);
                assertEquals(expected.get("ids").size(), classification.tokens(), text);
                double sum = 0;
                for (float score : classification.scores()) {
                    sum += score;
                }
                assertEquals(1.0, sum, 1e-6, "scores of " + text + " sum to 1");
            }
        }
    }

    @Test
    void hasIndependentRowsAndSoBatches() {
        assertTrue(model.batching().batched(), model.batching().reason());
        assertTrue(model.batching().batchInvariant());
        assertTrue(model.batching().reason().startsWith("no row-coupling operator"), model.batching().reason());
    }

    @Test
    void aBatchOfDifferentLengthsGivesEachTextItsOwnScores() throws Exception {
        List<String> texts = new ArrayList<>();
        EXPECTED.get("cases").forEach(expected -> texts.add(expected.get("text").asText()));
        List<String> shuffled = new ArrayList<>(texts.reversed());
        shuffled.add(0, shuffled.remove(3));
        shuffled.add(texts.get(2)); // a duplicate: both callers get their answer
        AtomicInteger inferences = new AtomicInteger();
        try (Predictor<String, Classification> predictor =
                model.newPredictor((inputs, real, padded) -> inferences.incrementAndGet())) {
            List<Classification> batched = predictor.predictBatch(shuffled);
            assertEquals(shuffled.size(), batched.size());
            for (int i = 0; i < shuffled.size(); i++) {
                JsonNode expected = EXPECTED.get("cases").get(texts.indexOf(shuffled.get(i)));
                Classification alone = predictor.predict(shuffled.get(i));
                assertArrayEquals(alone.scores(), batched.get(i).scores(), 1e-6f, "text " + i + ": " + shuffled.get(i));
                assertArrayEquals(TinyModels.floats(expected.get("scores")), batched.get(i).scores(), 1e-5f, shuffled.get(i));
                assertEquals(alone.labelIndex(), batched.get(i).labelIndex());
                assertEquals(alone.tokens(), batched.get(i).tokens());
            }
        }
        assertTrue(inferences.get() > 1 && inferences.get() < shuffled.size(), "texts grouped by length: " + inferences);
    }

    @Test
    void describesItselfInOipTerms() throws Exception {
        assertEquals(new ModelSignature("onnxruntime_onnx",
                        List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                        List.of(new TensorSignature("scores", "FP32", List.of(-1L, 3L)),
                                new TensorSignature("label", "BYTES", List.of(-1L)),
                                new TensorSignature("logits", "FP32", List.of(-1L, 3L)))),
                model.signature());
        Tensors request = new Tensors(List.of(Tensor.of("text", new String[] {"i love it", "ok"}, 2)));
        List<String> texts = model.io().inputs(request);
        assertEquals(List.of("i love it", "ok"), texts);
        try (Predictor<String, Classification> predictor = model.newPredictor()) {
            Tensors answer = model.io().outputs(predictor.predictBatch(texts));
            Tensor scores = answer.get("scores").orElseThrow();
            assertEquals(DataType.FP32, scores.datatype());
            assertArrayEquals(new long[] {2, 3}, scores.shape());
            float[] expected = new float[6];
            System.arraycopy(TinyModels.floats(EXPECTED.get("cases").get(0).get("scores")), 0, expected, 0, 3);
            System.arraycopy(TinyModels.floats(EXPECTED.get("cases").get(2).get("scores")), 0, expected, 3, 3);
            assertArrayEquals(expected, (float[]) scores.data(), 1e-5f);
            assertEquals(new Tensor("label", DataType.BYTES, new long[] {2}, new String[] {"positive", "neutral"}),
                    answer.get("label").orElseThrow());
        }
    }

    @Test
    void refusesLabelsThatDoNotNameEveryLogit() {
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> TextClassificationModel.load(MODEL, TOKENIZER, List.of("no", "yes"), "logits",
                        OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH)));
        assertEquals("model " + MODEL + " gives 3 logits per text but 2 labels were given [no, yes]; the labels must"
                + " name every logit, in order", error.getMessage());
        assertEquals("label 'a' appears twice in [a, b, a]", assertThrows(IllegalArgumentException.class,
                () -> TextClassificationModel.load(MODEL, TOKENIZER, List.of("a", "b", "a"), "logits",
                        OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH))).getMessage());
    }

    @Test
    void sessionOptionsThatChangeNothingNumericallyGiveTheSameScores() throws Exception {
        OnnxOptions engine = OnnxOptions.of(Map.of("optLevel", "NO_OPT", "executionMode", "PARALLEL",
                "interOpNumThreads", "2"));
        try (TextClassificationModel unoptimised = TextClassificationModel.load(MODEL, TOKENIZER, labels(), "logits",
                        engine, LoadOptions.defaults().withMaxLength(MAX_LENGTH).withLongInputs(LongInputs.truncate())
                                .withChunkReduction(ChunkReduction.MEAN));
                Predictor<String, Classification> a = unoptimised.newPredictor();
                Predictor<String, Classification> b = model.newPredictor()) {
            for (JsonNode expected : EXPECTED.get("cases")) {
                String text = expected.get("text").asText();
                float[] scores = a.predict(text).scores();
                assertArrayEquals(b.predict(text).scores(), scores, 1e-6f, text);
                assertArrayEquals(TinyModels.floats(expected.get("scores")), scores, 1e-5f, text);
            }
        }
    }

    @Test
    void readsTheLogitsFromTheOutputTheModelNames() throws Exception {
        Path renamed = TinyModels.file("tiny-classifier-renamed", "model.onnx");
        try (TextClassificationModel named = TextClassificationModel.load(renamed, TOKENIZER, labels(), "class_logits",
                        OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH)
                                .withLongInputs(LongInputs.truncate()).withChunkReduction(ChunkReduction.MEAN));
                Predictor<String, Classification> predictor = named.newPredictor()) {
            for (JsonNode expected : EXPECTED.get("cases")) {
                String text = expected.get("text").asText();
                assertArrayEquals(TinyModels.floats(expected.get("scores")), predictor.predict(text).scores(), 1e-5f,
                        text);
            }
        }
    }

    @Test
    void refusesAnOutputTheGraphDoesNotHaveListingTheOnesItHas() {
        Path renamed = TinyModels.file("tiny-classifier-renamed", "model.onnx");
        IOException error = assertThrows(IOException.class,
                () -> TextClassificationModel.load(renamed, TOKENIZER, labels(), "logits", OnnxOptions.none(),
                        LoadOptions.defaults().withMaxLength(MAX_LENGTH)));
        assertEquals("model " + renamed + " has no output 'logits' to read; its outputs are [mean, class_logits]",
                error.getMessage());
    }

    @Test
    void truncatesALongTextAtTheMaximum() throws Exception {
        try (Predictor<String, Classification> predictor = model.newPredictor()) {
            assertEquals(MAX_LENGTH, predictor.predict(LONG).tokens());
        }
    }

    @Test
    void aChunkedTextGetsTheMeanOfItsWindowsProbabilities() throws Exception {
        try (TextClassificationModel chunking = load(LongInputs.chunk(4), ChunkReduction.MEAN)) {
            List<float[]> windows = windowScores(chunking);
            int labels = 3;
            float[] mean = new float[labels];
            for (int l = 0; l < labels; l++) {
                double sum = 0;
                for (float[] window : windows) {
                    sum += window[l];
                }
                mean[l] = (float) (sum / windows.size());
            }
            assertChunkedResult(chunking, mean);
        }
    }

    @Test
    void aChunkedTextGetsTheRenormalisedMaximumOfItsWindowsProbabilities() throws Exception {
        try (TextClassificationModel chunking = load(LongInputs.chunk(4), ChunkReduction.MAX)) {
            List<float[]> windows = windowScores(chunking);
            float[] max = new float[3];
            for (float[] window : windows) {
                for (int l = 0; l < 3; l++) {
                    max[l] = Math.max(max[l], window[l]);
                }
            }
            float total = max[0] + max[1] + max[2];
            for (int l = 0; l < 3; l++) {
                max[l] /= total;
            }
            assertChunkedResult(chunking, max);
        }
    }

    @Test
    void aTextWithinTheMaximumGetsExactlyWhatTruncationGives() throws Exception {
        String text = EXPECTED.get("cases").get(3).get("text").asText();
        try (TextClassificationModel chunking = load(LongInputs.chunk(4), ChunkReduction.MAX);
                Predictor<String, Classification> a = chunking.newPredictor();
                Predictor<String, Classification> b = model.newPredictor()) {
            assertEquals(1, chunking.windows(text).size());
            assertArrayEquals(b.predict(text).scores(), a.predict(text).scores(), 0f);
        }
    }

    @Test
    void rejectsEmptyText() {
        InvalidInput error = assertThrows(InvalidInput.class, () -> model.validate("", 2));
        assertEquals("text 2 is an empty string", error.getMessage());
    }

    /** Each window of {@link #LONG} classified alone, checking that the windows really disagree. */
    private static List<float[]> windowScores(TextClassificationModel chunking) throws Exception {
        List<Encoding> windows = chunking.windows(LONG);
        assertTrue(windows.size() >= 3, "windows: " + windows.size());
        List<float[]> scores = new ArrayList<>();
        try (TextModel<String, Classification>.TextPredictor predictor =
                (TextModel<String, Classification>.TextPredictor) chunking.newPredictor()) {
            for (Encoding window : windows) {
                assertTrue(window.getIds().length <= MAX_LENGTH);
                scores.add(predictor.run(window).scores());
            }
        }
        assertTrue(scores.stream().map(TextClassificationModelTest::argmax).distinct().count() > 1,
                "the windows of the long text do not all agree");
        return scores;
    }

    private static void assertChunkedResult(TextClassificationModel chunking, float[] expected) throws Exception {
        int tokens = chunking.windows(LONG).stream().mapToInt(window -> window.getIds().length).sum();
        try (Predictor<String, Classification> predictor = chunking.newPredictor()) {
            Classification chunked = predictor.predict(LONG);
            assertArrayEquals(expected, chunked.scores(), 1e-6f);
            assertEquals(argmax(expected), chunked.labelIndex());
            assertEquals(tokens, chunked.tokens(), "usage counts the tokens of every window");
            assertEquals(1.0, chunked.scores()[0] + chunked.scores()[1] + chunked.scores()[2], 1e-6);
            List<Classification> batch = predictor.predictBatch(List.of("ok", LONG));
            assertArrayEquals(chunked.scores(), batch.get(1).scores(), 0f, "chunked in a batch as alone");
            assertFalse(batch.get(0).tokens() > MAX_LENGTH);
        }
    }

    private static int argmax(float[] scores) {
        int best = 0;
        for (int l = 1; l < scores.length; l++) {
            if (scores[l] > scores[best]) {
                best = l;
            }
        }
        return best;
    }

    @Test
    void keepsEachTextsLogitsBesideItsSoftmax() throws Exception {
        try (Predictor<String, Classification> predictor = model.newPredictor()) {
            for (JsonNode expected : EXPECTED.get("cases")) {
                String text = expected.get("text").asText();
                assertArrayEquals(TinyModels.floats(expected.get("logits")), predictor.predict(text).logits(), 1e-5f,
                        text);
            }
        }
    }

    @Test
    void aMultiLabelConfigScoresEachLabelByItsSigmoidAndNamesTheLabels(@TempDir Path folder) throws Exception {
        Path config = folder.resolve("config.json");
        Files.writeString(config, """
                {"problem_type": "multi_label_classification", "id2label": {"0": "neg", "1": "neu", "2": "pos"}}
                """);
        try (TextClassificationModel multi = TextClassificationModel.load(MODEL, TOKENIZER, config, List.of(),
                        "logits", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH));
                Predictor<String, Classification> predictor = multi.newPredictor()) {
            assertEquals(List.of("neg", "neu", "pos"), multi.labels());
            for (JsonNode expected : EXPECTED.get("cases")) {
                String text = expected.get("text").asText();
                float[] logits = TinyModels.floats(expected.get("logits"));
                float[] sigmoid = new float[logits.length];
                for (int l = 0; l < logits.length; l++) {
                    sigmoid[l] = (float) (1 / (1 + Math.exp(-logits[l])));
                }
                Classification classification = predictor.predict(text);
                assertArrayEquals(sigmoid, classification.scores(), 1e-5f, text);
                assertArrayEquals(logits, classification.logits(), 1e-5f, text);
                assertEquals(expected.get("label").asText().substring(0, 3),
                        multi.labels().get(classification.labelIndex()), text);
            }
        }
    }

    @Test
    void aSingleLabelConfigKeepsTheSoftmaxAndTheDescriptorsLabelsWin(@TempDir Path folder) throws Exception {
        Path config = folder.resolve("config.json");
        Files.writeString(config, "{\"id2label\": {\"0\": \"LABEL_0\", \"1\": \"LABEL_1\", \"2\": \"LABEL_2\"}}");
        try (TextClassificationModel single = TextClassificationModel.load(MODEL, TOKENIZER, config, labels(),
                        "logits", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH));
                Predictor<String, Classification> predictor = single.newPredictor()) {
            assertEquals(labels(), single.labels());
            JsonNode first = EXPECTED.get("cases").get(0);
            assertArrayEquals(TinyModels.floats(first.get("scores")), predictor.predict(first.get("text").asText())
                    .scores(), 1e-5f);
        }
        Files.writeString(config, "{\"id2label\": {\"0\": \"a\", \"2\": \"c\"}}");
        assertTrue(assertThrows(IOException.class, () -> TextClassificationModel.load(MODEL, TOKENIZER, config,
                List.of(), "logits", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH)))
                .getMessage().endsWith("id2label must name every id from 0 to 1; id 1 has null"));
    }
}
