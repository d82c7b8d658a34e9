package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.BatchInvarianceTestAccess;
import dev.serval.tensor.Tensors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each kind loads from a descriptor, its resolved files and the deployment's options, through the one catalog. */
class ModelCatalogTest {

    private static ModelDescriptor descriptor(ModelKind kind, int maxLength, List<String> labels) {
        return new ModelDescriptor(kind, "model.onnx", "tokenizer.json", maxLength, labels, Map.of(), "");
    }

    @Test
    void aNoopDescriptorLoadsTheNoopModelWithoutReadingItsFolder() throws Exception {
        try (Model<?, ?> model = ModelCatalog.load(descriptor(ModelKind.NOOP, 256, List.of()), Path.of("nowhere"),
                Path.of("nothing"), LoadOptions.defaults())) {
            assertInstanceOf(NoopModel.class, model);
        }
    }

    @Test
    void aTensorDescriptorLoadsItsFileAsATensorModel() throws Exception {
        Path file = TinyModels.file("tiny-mlp", "model.onnx");
        try (Model<?, ?> model = ModelCatalog.load(descriptor(ModelKind.TENSOR, 256, List.of()), file,
                Path.of("no-tokenizer.json"), LoadOptions.defaults().withIntraOpThreads(2))) {
            assertEquals("onnxruntime_onnx", model.signature().platform());
            assertEquals(List.of(new TensorSignature("input", "FP32", List.of(-1L, 4L))), model.signature().inputs());
            assertInstanceOf(Tensors.class, model.probeInput());
        }
    }

    @Test
    void aClassifierDescriptorLoadsItsFilesAndNamesItsLabelsInOrder() throws Exception {
        JsonNode expected = TinyModels.expected("tiny-classifier");
        List<String> labels = new ArrayList<>();
        expected.get("labels").forEach(label -> labels.add(label.asText()));
        try (Model<?, ?> loaded = ModelCatalog.load(descriptor(ModelKind.TEXT_CLASSIFICATION,
                expected.get("max_length").asInt(), labels), TinyModels.file("tiny-classifier", "model.onnx"),
                TinyModels.file("tiny-classifier", "tokenizer.json"), LoadOptions.defaults())) {
            @SuppressWarnings("unchecked")
            Model<String, Classification> model = (Model<String, Classification>) loaded;
            assertEquals(List.of(-1L, (long) labels.size()), model.signature().outputs().getFirst().shape());
            List<Classification> one = new ArrayList<>();
            for (int l = 0; l < labels.size(); l++) {
                float[] scores = new float[labels.size()];
                scores[l] = 1;
                one.add(Classification.of(scores, 1));
            }
            assertArrayEquals(labels.toArray(String[]::new),
                    (String[]) model.io().outputs(one).get("label").orElseThrow().data());
        }
    }

    @Test
    void anEmbeddingDescriptorLoadsWithTheDescriptorsMaxLengthUnlessTheOptionsSetOne() throws Exception {
        Path folder = BatchInvarianceTestAccess.tinyModelDirectory();
        ModelDescriptor descriptor = descriptor(ModelKind.TEXT_EMBEDDING, 256, List.of());
        LoadOptions chunking = LoadOptions.defaults().withLongInputs(LongInputs.chunk(100));
        Path file = folder.resolve("model.onnx");
        Path tokenizer = folder.resolve("tokenizer.json");
        try (Model<?, ?> model = ModelCatalog.load(descriptor, file, tokenizer, chunking)) {
            assertEquals("embedding", model.signature().outputs().getFirst().name());
            assertTrue(model.batching().reason().startsWith("long inputs are chunked"), model.batching().reason());
        }
        assertEquals("chunk-overlap (100) must be at most half of max-length (16)",
                assertThrows(IllegalArgumentException.class,
                        () -> ModelCatalog.load(descriptor, file, tokenizer, chunking.withMaxLength(16))).getMessage());
    }

    @Test
    void aRerankDescriptorLoadsACrossEncoderBoundedByItsDescriptor() throws Exception {
        ModelDescriptor descriptor = new ModelDescriptor(ModelKind.TEXT_RERANK, "model.onnx", "tokenizer.json", 24,
                List.of(), "", dev.serval.model.onnx.OnnxOptions.none(), "", null, 2, "config.json");
        try (Model<?, ?> loaded = ModelCatalog.load(descriptor, TinyModels.reranker("model.onnx"),
                TinyModels.reranker("tokenizer.json"), LoadOptions.defaults())) {
            @SuppressWarnings("unchecked")
            Model<TextPair, Relevance> model = (Model<TextPair, Relevance>) loaded;
            Tensors three = new Tensors(List.of(dev.serval.tensor.Tensor.of("query", new String[] {"fox"}, 1),
                    dev.serval.tensor.Tensor.of("documents", new String[] {"a", "b", "c"}, 3)));
            assertEquals("'documents' holds 3 documents; this model takes at most 2 per request "
                    + "(max_documents_per_request)", assertThrows(dev.serval.error.InvalidInput.class,
                    () -> model.io().inputs(three)).getMessage());
            assertInstanceOf(TextPair.class, model.probeInput());
            try (Predictor<TextPair, Relevance> predictor = model.newPredictor()) {
                Relevance relevance = predictor.predict(new TextPair("a quick fox", "fox"));
                assertEquals(relevance.score(), 1 / (1 + Math.exp(-relevance.logit())), 1e-6);
            }
        }
    }

    /** A text-embedding descriptor naming {@code ranges} as its quantisation ranges. */
    private static ModelDescriptor withRanges(String ranges) {
        return new ModelDescriptor(ModelKind.TEXT_EMBEDDING, "model.onnx", "tokenizer.json", 256, List.of(), "",
                OnnxOptions.none(), "", null, ModelDescriptor.DEFAULT_MAX_DOCUMENTS_PER_REQUEST,
                ModelDescriptor.DEFAULT_CONFIG, List.of(), ranges);
    }

    private static String rows(int width, float min, float max) {
        StringBuilder mins = new StringBuilder();
        StringBuilder maxs = new StringBuilder();
        for (int j = 0; j < width; j++) {
            mins.append(j == 0 ? "" : ",").append(min);
            maxs.append(j == 0 ? "" : ",").append(max);
        }
        return "[[" + mins + "],[" + maxs + "]]";
    }

    @Test
    void anEmbeddingModelCarriesTheRangesItsDescriptorNamesOfItsWidth(@TempDir Path dir) throws Exception {
        Path folder = BatchInvarianceTestAccess.tinyModelDirectory();
        Path ranges = Files.writeString(dir.resolve("ranges.json"), rows(16, -1f, 1f));
        try (Model<?, ?> model = ModelCatalog.load(withRanges("ranges.json"), folder.resolve("model.onnx"),
                folder.resolve("tokenizer.json"), null, ranges, LoadOptions.defaults(), null)) {
            assertEquals(16, model.quantizationRanges().orElseThrow().width());
        }
        try (Model<?, ?> model = ModelCatalog.load(descriptor(ModelKind.TEXT_EMBEDDING, 256, List.of()),
                folder.resolve("model.onnx"), folder.resolve("tokenizer.json"), LoadOptions.defaults())) {
            assertTrue(model.quantizationRanges().isEmpty());
        }
    }

    @Test
    void refusesToLoadAModelWhoseRangesFileIsMalformedWithOneLineNamingTheFieldAndFile(@TempDir Path dir)
            throws Exception {
        Path folder = BatchInvarianceTestAccess.tinyModelDirectory();
        Map<String, String> files = new java.util.LinkedHashMap<>();
        files.put(rows(8, -1f, 1f), "the file's rows hold 8 numbers; the model's vectors have 16 dimensions");
        files.put(rows(16, 1f, 1f), "the file dimension 0: the maximum 1.0 must be above the minimum 1.0");
        files.put("[[0,0],[1,1],[2,2]]", "the file must be a JSON array of two arrays");
        files.put("[[0,0],[1]]", "the file must be two rows of the same width");
        files.put("[[0,\"a\"],[1,1]]", "the file the minimums hold \"a\" at 1, not a number");
        files.put("[[0,-1e39],[1,1]]", "not a finite float");
        files.put("[[0,0],\n[1,", "the file is not JSON: ");
        for (Map.Entry<String, String> file : files.entrySet()) {
            Path ranges = Files.writeString(dir.resolve("ranges.json"), file.getKey());
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> ModelCatalog.load(withRanges("ranges.json"), folder.resolve("model.onnx"),
                            folder.resolve("tokenizer.json"), null, ranges, LoadOptions.defaults(), null));
            assertTrue(refused.getMessage().startsWith("field 'quantization_ranges'"), refused.getMessage());
            assertTrue(refused.getMessage().contains(file.getValue()), refused.getMessage());
            assertEquals(1, refused.getMessage().lines().count(), refused.getMessage());
        }
        assertEquals("field 'quantization_ranges' (missing.json): no such file in the model's folder",
                assertThrows(IllegalArgumentException.class, () -> ModelCatalog.load(withRanges("missing.json"),
                        folder.resolve("model.onnx"), folder.resolve("tokenizer.json"), null,
                        dir.resolve("missing.json"), LoadOptions.defaults(), null)).getMessage());
    }
}
