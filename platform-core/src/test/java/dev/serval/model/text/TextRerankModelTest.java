package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.error.InvalidInput;
import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.Relevance;
import dev.serval.model.TensorSignature;
import dev.serval.model.TextPair;
import dev.serval.model.TinyModels;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The text-rerank kind on the tiny cross-encoder of {@code scripts/make_tiny_cross_encoder.py}, against the scores
 * Python computed with tokenizers' pair encoding and onnxruntime ({@code scripts/make_rerank_reference.py}): long
 * documents and queries truncated longest-first, unicode, pairs alone and in batches of other lengths.
 */
class TextRerankModelTest {

    private static final Path MODEL = TinyModels.reranker("model.onnx");
    private static final Path TOKENIZER = TinyModels.reranker("tokenizer.json");
    private static final JsonNode REFERENCE = reference();
    private static final int MAX_LENGTH = REFERENCE.get("max_length").asInt();

    private static TextRerankModel model;

    @BeforeAll
    static void load() throws Exception {
        model = TextRerankModel.load(MODEL, TOKENIZER, "logits", OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(MAX_LENGTH), 8);
    }

    @AfterAll
    static void close() {
        model.close();
    }

    private static JsonNode reference() {
        try (InputStream in = TextRerankModelTest.class.getClassLoader()
                .getResourceAsStream("reference/tiny-cross-encoder-reference.json")) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every (query, document) of the reference, in order, with its expected row. */
    private record Expected(TextPair pair, long[] ids, long[] typeIds, float logit, float score, int tokens) {
    }

    private static List<Expected> expected() {
        List<Expected> all = new ArrayList<>();
        for (JsonNode c : REFERENCE.get("cases")) {
            for (int d = 0; d < c.get("documents").size(); d++) {
                all.add(new Expected(new TextPair(c.get("query").asText(), c.get("documents").get(d).asText()),
                        longs(c.get("ids").get(d)), longs(c.get("type_ids").get(d)),
                        c.get("logits").get(d).floatValue(), c.get("scores").get(d).floatValue(),
                        c.get("tokens").get(d).asInt()));
            }
        }
        return all;
    }

    private static long[] longs(JsonNode array) {
        long[] values = new long[array.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = array.get(i).asLong();
        }
        return values;
    }

    private static Tensors request(String query, String... documents) {
        return new Tensors(List.of(Tensor.of(RerankIO.QUERY, new String[] {query}, 1),
                Tensor.of(RerankIO.DOCUMENTS, documents, documents.length)));
    }

    @Test
    void tokenisesEachPairAsTokenizersDoesLongestFirst() throws Exception {
        try (HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(TOKENIZER)
                .optAddSpecialTokens(true).optTruncation(true).optMaxLength(MAX_LENGTH).optPadding(false).build()) {
            for (Expected row : expected()) {
                Encoding encoding = LeanEncoding.pair(tokenizer, row.pair().query(), row.pair().document(), MAX_LENGTH);
                assertArrayEquals(row.ids(), encoding.getIds(), row.pair().toString());
                assertArrayEquals(row.typeIds(), encoding.getTypeIds(), row.pair().toString());
            }
        }
    }

    @Test
    void aLongDocumentIsReadOnlyAsFarAsItsKeptTokens() throws Exception {
        String query = "is this a good movie and is the service fine";
        String document = "the quick brown fox jumps over the lazy dog again ".repeat(400);
        try (HuggingFaceTokenizer tokenizer = HuggingFaceTokenizer.builder().optTokenizerPath(TOKENIZER)
                .optAddSpecialTokens(true).optTruncation(true).optMaxLength(MAX_LENGTH).optPadding(false).build()) {
            Encoding whole = tokenizer.encode(query, document);
            Encoding lean = LeanEncoding.pair(tokenizer, query, document, MAX_LENGTH);
            assertArrayEquals(whole.getIds(), lean.getIds());
            assertArrayEquals(whole.getTypeIds(), lean.getTypeIds());
            assertArrayEquals(whole.getAttentionMask(), lean.getAttentionMask());
            Encoding swapped = LeanEncoding.pair(tokenizer, document, query, MAX_LENGTH);
            assertArrayEquals(tokenizer.encode(document, query).getIds(), swapped.getIds(), "a long query likewise");
        }
    }

    @Test
    void scoresEveryPairAsThePythonReference() throws Exception {
        try (Predictor<TextPair, Relevance> predictor = model.newPredictor()) {
            for (Expected row : expected()) {
                Relevance relevance = predictor.predict(row.pair());
                assertEquals(row.logit(), relevance.logit(), 1e-5, "logit of " + row.pair());
                assertEquals(row.score(), relevance.score(), 1e-5, "score of " + row.pair());
                assertEquals(row.tokens(), relevance.tokens(), "tokens of " + row.pair());
            }
        }
    }

    @Test
    void aPairScoresTheSameAloneAndBatchedWithPairsOfOtherLengths() throws Exception {
        List<Expected> rows = new ArrayList<>(expected());
        Collections.shuffle(rows, new Random(40));
        rows.add(rows.getFirst()); // the same pair twice in one batch: each gets its answer
        AtomicInteger inferences = new AtomicInteger();
        try (Predictor<TextPair, Relevance> predictor =
                model.newPredictor((inputs, real, padded) -> inferences.incrementAndGet())) {
            List<Relevance> batched = predictor.predictBatch(rows.stream().map(Expected::pair).toList());
            assertEquals(rows.size(), batched.size());
            for (int i = 0; i < rows.size(); i++) {
                Relevance alone = predictor.predict(rows.get(i).pair());
                String pair = "pair " + i + ": " + rows.get(i).pair();
                assertEquals(alone.logit(), batched.get(i).logit(), 1e-6, pair); // kernels may differ by an ulp
                assertEquals(alone.score(), batched.get(i).score(), 1e-6, pair);
                assertEquals(alone.tokens(), batched.get(i).tokens(), pair);
                assertEquals(rows.get(i).score(), batched.get(i).score(), 1e-5, rows.get(i).pair().toString());
            }
        }
        assertTrue(model.batching().batched(), model.batching().reason());
        assertTrue(inferences.get() > 1 && inferences.get() < rows.size(), "pairs grouped by length: " + inferences);
    }

    @Test
    void mapsOneQueryAndItsDocumentsToPairsAndTheirScoresToTensors() throws Exception {
        assertEquals(new ModelSignature("onnxruntime_onnx",
                        List.of(new TensorSignature("query", "BYTES", List.of(1L)),
                                new TensorSignature("documents", "BYTES", List.of(-1L))),
                        List.of(new TensorSignature("scores", "FP32", List.of(-1L)),
                                new TensorSignature("logits", "FP32", List.of(-1L)),
                                new TensorSignature("tokens", "INT32", List.of(-1L)))),
                model.signature());
        JsonNode first = REFERENCE.get("cases").get(0);
        List<TextPair> pairs = model.io().inputs(request(first.get("query").asText(),
                first.get("documents").get(0).asText(), first.get("documents").get(3).asText()));
        assertEquals(List.of(new TextPair(first.get("query").asText(), first.get("documents").get(0).asText()),
                new TextPair(first.get("query").asText(), first.get("documents").get(3).asText())), pairs);
        try (Predictor<TextPair, Relevance> predictor = model.newPredictor()) {
            Tensors answer = model.io().outputs(predictor.predictBatch(pairs));
            Tensor scores = answer.get("scores").orElseThrow();
            assertEquals(DataType.FP32, scores.datatype());
            assertArrayEquals(new long[] {2}, scores.shape());
            assertArrayEquals(new float[] {first.get("scores").get(0).floatValue(),
                    first.get("scores").get(3).floatValue()}, (float[]) scores.data(), 1e-5f);
            assertArrayEquals(new float[] {first.get("logits").get(0).floatValue(),
                    first.get("logits").get(3).floatValue()}, (float[]) answer.get("logits").orElseThrow().data(), 1e-5f);
            assertEquals(new Tensor("tokens", DataType.INT32, new long[] {2}, new int[] {
                    first.get("tokens").get(0).asInt(), first.get("tokens").get(3).asInt()}),
                    answer.get("tokens").orElseThrow());
        }
    }

    @Test
    void refusesMoreDocumentsThanTheModelTakesBeforeMakingAnyPair() {
        String[] nine = new String[9];
        java.util.Arrays.fill(nine, "a document");
        InvalidInput error = assertThrows(InvalidInput.class, () -> model.io().inputs(request("q", nine)));
        assertEquals("inputs[1].shape", error.field());
        assertEquals("'documents' holds 9 documents; this model takes at most 8 per request "
                + "(max_documents_per_request)", error.getMessage());
    }

    @Test
    void refusesRequestsThatAreNotOneQueryAndItsDocuments() {
        assertEquals("'inputs' must hold 'query' (BYTES [1]) and 'documents' (BYTES [n]); it has 'text'",
                assertThrows(InvalidInput.class, () -> model.io().inputs(new Tensors(List.of(
                        Tensor.of("text", new String[] {"a"}, 1))))).getMessage());
        assertEquals("input 'query' has shape [2]; this model takes one query, [1]",
                assertThrows(InvalidInput.class, () -> model.io().inputs(new Tensors(List.of(
                        Tensor.of("query", new String[] {"a", "b"}, 2),
                        Tensor.of("documents", new String[] {"d"}, 1))))).getMessage());
        assertEquals("input 'documents' is empty; send at least one document",
                assertThrows(InvalidInput.class, () -> model.io().inputs(request("q"))).getMessage());
        assertEquals("input 'documents' has datatype FP32; this model takes BYTES",
                assertThrows(InvalidInput.class, () -> model.io().inputs(new Tensors(List.of(
                        Tensor.of("query", new String[] {"a"}, 1),
                        Tensor.of("documents", new float[] {1}, 1))))).getMessage());
        assertEquals("document 1 is an empty string",
                assertThrows(InvalidInput.class, () -> model.validate(new TextPair("q", ""), 1)).getMessage());
        assertEquals("the query is an empty string",
                assertThrows(InvalidInput.class, () -> model.validate(new TextPair("", "d"), 0)).getMessage());
    }

    @Test
    void refusesAModelWithMoreThanOneLogitAndChunking() {
        Path classifier = TinyModels.file("tiny-classifier", "model.onnx");
        IOException error = assertThrows(IOException.class, () -> TextRerankModel.load(
                classifier, TOKENIZER, "logits", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(16), 8));
        assertEquals("model " + classifier + " failed its first inference: the model gives 3 logits per pair; a "
                + "text-rerank model gives one (num_labels 1)", error.getMessage());
        assertEquals("a text-rerank model truncates each pair at max_length; long_inputs: chunk is for single texts",
                assertThrows(IllegalArgumentException.class, () -> TextRerankModel.load(MODEL, TOKENIZER, "logits",
                        OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH)
                                .withLongInputs(LongInputs.chunk(4)), 8)).getMessage());
    }
}
