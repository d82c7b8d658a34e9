package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.model.text.BatchInvarianceTestAccess;
import dev.serval.tensor.Tensors;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

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
}
