package dev.serval.api.repository;

import java.util.Arrays;
import java.util.Optional;

/** What a model in the repository is, which fixes how it is loaded and which APIs serve it. */
public enum ModelKind {
    /** Tokenizer + ONNX encoder + mean pooling: OIP {@code text} to {@code embedding}, and {@code /v1/embeddings}. */
    TEXT_EMBEDDING("text-embedding"),
    /** Tokenizer + ONNX sequence classifier + softmax: OIP {@code text} to {@code scores} and {@code label}. */
    TEXT_CLASSIFICATION("text-classification"),
    /** Any ONNX model: OIP input tensors map by name to the model's inputs, outputs back. */
    TENSOR("tensor"),
    /** Returns its input tensors unchanged: the platform's own overhead, for benchmarks. */
    NOOP("noop");

    private final String id;

    ModelKind(String id) {
        this.id = id;
    }

    /** The name descriptors use: {@code text-embedding}, {@code text-classification}, {@code tensor}, {@code noop}. */
    public String id() {
        return id;
    }

    public boolean text() {
        return this == TEXT_EMBEDDING || this == TEXT_CLASSIFICATION;
    }

    public static Optional<ModelKind> of(String id) {
        return Arrays.stream(values()).filter(kind -> kind.id.equals(id)).findFirst();
    }

    public static String ids() {
        return String.join(", ", Arrays.stream(values()).map(ModelKind::id).toList());
    }
}
