package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.error.InvalidInput;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.TextTokenizer;
import dev.serval.model.TinyModels;
import dev.serval.model.TokenVectors;
import dev.serval.model.onnx.OnnxOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Serval's embeddings of the default model against vectors computed independently by
 * {@code scripts/make_minilm_reference.py} (Python onnxruntime + tokenizers on the same ONNX file).
 */
class TextEmbeddingModelTest {

    private static TextEmbeddingModel model;
    private static JsonNode reference;

    @BeforeAll
    static void load() throws Exception {
        Path dir = Path.of("target", "models");
        ClassLoader loader = TextEmbeddingModelTest.class.getClassLoader();
        model = TextEmbeddingModel.load(
                ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", dir),
                ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", dir),
                "last_hidden_state",
                OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(256));
        try (InputStream in = loader.getResourceAsStream("reference/minilm-reference.json")) {
            reference = new ObjectMapper().readTree(in);
        }
    }

    @AfterAll
    static void close() {
        model.close();
    }

    @Test
    void itsTokenizerShowsTheTokensTheModelReadsAndDecodesThem() {
        TextTokenizer tokenizer = model.tokenizer().orElseThrow();
        JsonNode sentence = reference.get("sentences").get(0);

        List<TextTokenizer.Token> tokens = tokenizer.tokenize("Hello, world!", true);

        assertEquals(List.of("[CLS]", "Hello", ",", "world", "!", "[SEP]"),
                tokens.stream().map(TextTokenizer.Token::text).toList());
        assertEquals(new TextTokenizer.Token(101, "[CLS]", true, -1, -1), tokens.getFirst());
        assertEquals(new TextTokenizer.Token(7592, "Hello", false, 0, 5), tokens.get(1));
        assertEquals(4, tokenizer.tokenize("Hello, world!", false).size(), "without [CLS] and [SEP]");
        assertEquals(sentence.get("tokens").asInt(), tokenizer.tokenize(sentence.get("text").asText(), true).size(),
                "the tokens the model reads");
        long[] ids = tokens.stream().mapToLong(TextTokenizer.Token::id).toArray();
        assertEquals("hello, world!", tokenizer.decode(ids, true));
        assertEquals("[CLS] hello, world! [SEP]", tokenizer.decode(ids, false));
        String huge = "word ".repeat(2_000_000); // 10 MB: tokenised on a bounded prefix, cut at max_length
        assertEquals(256, tokenizer.tokenize(huge, true).size());
        assertEquals(256, tokenizer.maxLength(), "the most tokens it reads of a text");
    }

    @Test
    void matchesTheIndependentReferenceForEverySentence() throws Exception {
        assertEquals(256, reference.get("max_length").asInt());
        JsonNode sentences = reference.get("sentences");
        assertTrue(sentences.size() >= 12, "the reference file holds a dozen sentences");
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            for (JsonNode sentence : sentences) {
                String text = sentence.get("text").asText();
                Embedding embedding = predictor.predict(text);
                float[] expected = toFloats(sentence.get("embedding"));
                double cosine = cosine(expected, embedding.vector());
                assertTrue(cosine >= 0.999, "cosine " + cosine + " for: " + text);
                assertEquals(sentence.get("tokens").asInt(), embedding.tokens(), "tokens of: " + text);
                double norm = sentence.get("norm").asDouble();
                assertEquals(norm, embedding.norm(), norm * 1e-3, "the pooled vector's length, for: " + text);
            }
        }
    }

    @Test
    void tokenVectorsMatchTheIndependentReferenceTokenByToken() throws Exception {
        int compared = 0;
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            for (JsonNode sentence : reference.get("sentences")) {
                JsonNode expected = sentence.get("token_embeddings");
                if (expected == null) {
                    continue;
                }
                String text = sentence.get("text").asText();
                TokenVectors tokens = predictor.predict(text).tokenVectors();
                assertEquals(expected.size(), tokens.tokens(), "one vector per token, [CLS] and [SEP] included: " + text);
                assertEquals(384, tokens.dimension());
                for (int t = 0; t < expected.size(); t++) {
                    float[] vector = tokens.token(t);
                    for (int d = 0; d < vector.length; d++) {
                        assertEquals(expected.get(t).get(d).asDouble(), vector[d], 1e-4,
                                text + ", token " + t + ", element " + d);
                    }
                }
                compared++;
            }
        }
        assertEquals(2, compared, "the reference holds the token embeddings of two sentences");
    }

    @Test
    void tokenVectorsDoNotDependOnWhatTheTextIsBatchedWith() throws Exception {
        try (TextEmbeddingModel tiny = tinyEncoder("tiny-fp32-encoder", OnnxOptions.none(), "last_hidden_state");
                Predictor<String, Embedding> predictor = tiny.newPredictor()) {
            assertTrue(tiny.batching().batched(), "the tiny encoder runs texts together: " + tiny.batching().reason());
            List<Embedding> batched = predictor.predictBatch(BatchInvarianceTest.MIXED);
            for (int i = 0; i < BatchInvarianceTest.MIXED.size(); i++) {
                String text = BatchInvarianceTest.MIXED.get(i);
                TokenVectors alone = predictor.predict(text).tokenVectors();
                TokenVectors together = batched.get(i).tokenVectors();
                assertEquals(batched.get(i).tokens(), together.tokens(), "padding is not a token: " + text);
                assertEquals(alone.tokens(), together.tokens(), text);
                for (int t = 0; t < alone.tokens(); t++) {
                    assertArrayEqualsWithin(alone.token(t), together.token(t), text + ", token " + t);
                }
            }
        }
    }

    @Test
    void aTextReadInWindowsHasNoTokenVectorsAndOneWithinTheMaximumHas() throws Exception {
        try (TextEmbeddingModel chunked = TextEmbeddingModel.load(TinyModels.file("tiny-fp32-encoder", "model.onnx"),
                BatchInvarianceTest.minilm()[1], "last_hidden_state", OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(16).withLongInputs(LongInputs.chunk(4, 8)));
                Predictor<String, Embedding> predictor = chunked.newPredictor()) {
            assertEquals(null, predictor.predict("word ".repeat(40)).tokenVectors());
            assertEquals(5, predictor.predict("short text here").tokenVectors().tokens());
        }
    }

    @Test
    void truncatesLongTextsAt256Tokens() throws Exception {
        String longText = "word ".repeat(1000);
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            assertEquals(256, predictor.predict(longText).tokens());
        }
    }

    @Test
    void returnsUnitVectorsOfTheModelsDimension() throws Exception {
        assertEquals(384, model.dimension());
        assertEquals(List.of(-1L, 384L), model.signature().outputs().getFirst().shape());
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            float[] vector = predictor.predict("unit length").vector();
            assertEquals(1.0, Math.sqrt(dot(vector, vector)), 1e-5);
        }
    }

    @Test
    void givesTheSameVectorForTheSameTextEveryTime() throws Exception {
        try (Predictor<String, Embedding> a = model.newPredictor(); Predictor<String, Embedding> b = model.newPredictor()) {
            float[] first = a.predict("The same text twice.").vector();
            a.predict("Something much longer in between, to change what the session last saw.");
            float[] second = b.predict("The same text twice.").vector();
            for (int i = 0; i < first.length; i++) {
                assertEquals(first[i], second[i], 1e-6, "element " + i);
            }
        }
    }

    /** The tiny FP32 encoder with MiniLM's tokenizer, as {@link BatchInvarianceTest} uses it. */
    private static TextEmbeddingModel tinyEncoder(String model, OnnxOptions engine, String output) throws Exception {
        return TextEmbeddingModel.load(TinyModels.file(model, "model.onnx"), BatchInvarianceTest.minilm()[1], output,
                engine, LoadOptions.defaults().withMaxLength(64).withLongInputs(LongInputs.truncate()));
    }

    /** {@code a} and {@code b} embed {@link BatchInvarianceTest#MIXED} alike, one by one and as a batch. */
    private static void assertSameEmbeddings(TextEmbeddingModel a, TextEmbeddingModel b) throws Exception {
        try (Predictor<String, Embedding> pa = a.newPredictor(); Predictor<String, Embedding> pb = b.newPredictor()) {
            List<Embedding> batchA = pa.predictBatch(BatchInvarianceTest.MIXED);
            List<Embedding> batchB = pb.predictBatch(BatchInvarianceTest.MIXED);
            for (int i = 0; i < BatchInvarianceTest.MIXED.size(); i++) {
                String text = BatchInvarianceTest.MIXED.get(i);
                assertArrayEqualsWithin(pb.predict(text).vector(), pa.predict(text).vector(), text);
                assertArrayEqualsWithin(batchB.get(i).vector(), batchA.get(i).vector(), text + " (batched)");
            }
        }
    }

    private static void assertArrayEqualsWithin(float[] expected, float[] actual, String text) {
        assertEquals(expected.length, actual.length, text);
        for (int d = 0; d < expected.length; d++) {
            assertEquals(expected[d], actual[d], 1e-6, text + ", element " + d);
        }
    }

    @Test
    void sessionOptionsThatChangeNothingNumericallyGiveTheSameVectors() throws Exception {
        OnnxOptions engine = OnnxOptions.of(Map.of("optLevel", "NO_OPT", "memoryPatternOptimization", "true"));
        try (TextEmbeddingModel plain = tinyEncoder("tiny-fp32-encoder", OnnxOptions.none(), "last_hidden_state");
                TextEmbeddingModel unoptimised = tinyEncoder("tiny-fp32-encoder", engine, "last_hidden_state")) {
            assertSameEmbeddings(plain, unoptimised);
        }
    }

    @Test
    void poolsTheOutputTheModelNames() throws Exception {
        try (TextEmbeddingModel plain = tinyEncoder("tiny-fp32-encoder", OnnxOptions.none(), "last_hidden_state");
                TextEmbeddingModel named = tinyEncoder("tiny-encoder-token-embeddings", OnnxOptions.none(),
                        "token_embeddings")) {
            assertEquals(16, named.dimension());
            assertTrue(named.batching().batched(), named.batching().reason());
            assertSameEmbeddings(plain, named);
        }
    }

    @Test
    void refusesAnOutputTheGraphDoesNotHaveListingTheOnesItHas() {
        Path file = TinyModels.file("tiny-encoder-token-embeddings", "model.onnx");
        IOException error = assertThrows(IOException.class,
                () -> TextEmbeddingModel.load(file, BatchInvarianceTest.minilm()[1], "last_hidden_state",
                        OnnxOptions.none(), LoadOptions.defaults().withMaxLength(64)));
        assertEquals("model " + file + " has no output 'last_hidden_state' to read; its outputs are"
                + " [sentence_embedding, token_embeddings]", error.getMessage());
    }

    @Test
    void refusesAnOutputThatDoesNotHoldTokenEmbeddings() {
        IOException error = assertThrows(IOException.class,
                () -> tinyEncoder("tiny-encoder-token-embeddings", OnnxOptions.none(), "sentence_embedding"));
        assertTrue(error.getMessage().matches(".* failed its first inference: expected output 'sentence_embedding' to"
                + " hold token embeddings \\[1, \\d+, dim\\], got \\(1, 16\\)"), error.getMessage());
    }

    @Test
    void rejectsEmptyText() {
        InvalidInput error = assertThrows(InvalidInput.class, () -> model.validate("", 3));
        assertEquals("text 3 is an empty string", error.getMessage());
    }

    private static float[] toFloats(JsonNode array) {
        float[] values = new float[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = (float) array.get(i).asDouble();
        }
        return values;
    }

    private static double cosine(float[] a, float[] b) {
        return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
    }

    private static double dot(float[] a, float[] b) {
        assertEquals(a.length, b.length);
        double sum = 0;
        for (int i = 0; i < a.length; i++) {
            sum += (double) a[i] * b[i];
        }
        return sum;
    }
}
