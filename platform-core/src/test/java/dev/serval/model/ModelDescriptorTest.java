package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.serval.model.onnx.OnnxOptions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The descriptor record's own checks; reading {@code model.yaml} into it is the repository's (platform-api). */
class ModelDescriptorTest {

    @Test
    void eachKindReadsItsDefaultOutputUnlessTheDescriptorNamesOne() {
        assertEquals("last_hidden_state", new ModelDescriptor(ModelKind.TEXT_EMBEDDING, "model.onnx", "tokenizer.json",
                256, List.of(), Map.of(), "").output());
        assertEquals("logits", new ModelDescriptor(ModelKind.TEXT_CLASSIFICATION, "model.onnx", "tokenizer.json", 256,
                List.of("a", "b"), Map.of(), "").output());
        assertEquals("", new ModelDescriptor(ModelKind.TENSOR, "model.onnx", "", 256, List.of(), Map.of(), "").output());
        assertEquals("class_logits", new ModelDescriptor(ModelKind.TEXT_CLASSIFICATION, "model.onnx", "tokenizer.json",
                256, List.of("a", "b"), "class_logits", OnnxOptions.none(), "").output());
    }

    @Test
    void engineOptionsGivenAsTextAreCheckedOnnxRuntimeOptions() {
        assertEquals(OnnxOptions.of(Map.of("optLevel", "BASIC_OPT")), new ModelDescriptor(ModelKind.TENSOR, "model.onnx",
                "", 256, List.of(), "", Map.of("optLevel", "BASIC_OPT"), "").engine());
        assertThrows(IllegalArgumentException.class, () -> new ModelDescriptor(ModelKind.TENSOR, "model.onnx", "", 256,
                List.of(), "", Map.of("optLevel", "ALL"), ""));
    }

    @Test
    void refusesEngineOptionsForANoopModelAndAnOutputForAKindThatReadsNone() {
        assertThrows(IllegalArgumentException.class, () -> new ModelDescriptor(ModelKind.NOOP, "model.onnx", "", 256,
                List.of(), Map.of("optLevel", "NO_OPT"), ""));
        assertEquals("a tensor model reads no single output; 'output' is for text kinds",
                assertThrows(IllegalArgumentException.class, () -> new ModelDescriptor(ModelKind.TENSOR, "model.onnx",
                        "", 256, List.of(), "y", OnnxOptions.none(), "")).getMessage());
    }

    @Test
    void kindsAreKnownByTheIdsDescriptorsUse() {
        assertEquals(ModelKind.TEXT_CLASSIFICATION, ModelKind.of("text-classification").orElseThrow());
        assertEquals("text-embedding, text-classification, text-rerank, tensor, noop, pipeline, java", ModelKind.ids());
        assertEquals(List.of(true, true, true, false, false, false, false),
                List.of(ModelKind.values()).stream().map(ModelKind::text).toList());
        assertEquals(List.of(false, false, false, false, false, true, true),
                List.of(ModelKind.values()).stream().map(ModelKind::composite).toList());
    }
}
