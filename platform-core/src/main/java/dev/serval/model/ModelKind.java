package dev.serval.model;

import java.util.Arrays;
import java.util.Optional;

/** What a model in the repository is, which fixes how it is loaded and which APIs serve it. */
public enum ModelKind {
    /** Tokenizer + ONNX encoder + mean pooling: OIP {@code text} to {@code embedding}, and {@code /v1/embeddings}. */
    TEXT_EMBEDDING("text-embedding", "last_hidden_state"),
    /** Tokenizer + ONNX sequence classifier + softmax: OIP {@code text} to {@code scores} and {@code label}. */
    TEXT_CLASSIFICATION("text-classification", "logits"),
    /** Any ONNX model: OIP input tensors map by name to the model's inputs, outputs back. */
    TENSOR("tensor", ""),
    /** Returns its input tensors unchanged: the platform's own overhead, for benchmarks. */
    NOOP("noop", "");

    private final String id;
    private final String defaultOutput;

    ModelKind(String id, String defaultOutput) {
        this.id = id;
        this.defaultOutput = defaultOutput;
    }

    /** The name descriptors use: {@code text-embedding}, {@code text-classification}, {@code tensor}, {@code noop}. */
    public String id() {
        return id;
    }

    /**
     * The graph output the kind reads unless a descriptor names another: the token embeddings
     * {@code last_hidden_state} [batch, seq, dim] of a text embedding model, the logits {@code logits} [batch, labels]
     * of a text classifier; empty for the kinds that read no single output.
     */
    public String defaultOutput() {
        return defaultOutput;
    }

    /** Whether the kind is a text model: a tokenizer in front of an ONNX graph, one result per text. */
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
