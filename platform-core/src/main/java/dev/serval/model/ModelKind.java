package dev.serval.model;

import dev.serval.model.text.RerankIO;
import dev.serval.request.InvocationIO;
import dev.serval.request.TensorIO;
import dev.serval.request.TextIO;
import dev.serval.request.WholeRequestIO;
import dev.serval.tensor.Tensors;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** What a model in the repository is, which fixes how it is loaded and which APIs serve it. */
public enum ModelKind {
    /** Tokenizer + ONNX encoder + mean pooling: OIP {@code text} to {@code embedding}, and {@code /v1/embeddings}. */
    TEXT_EMBEDDING("text-embedding", "last_hidden_state"),
    /** Tokenizer + ONNX sequence classifier + softmax: OIP {@code text} to {@code scores} and {@code label}. */
    TEXT_CLASSIFICATION("text-classification", "logits"),
    /**
     * Tokenizer + ONNX cross-encoder (a sequence classifier of one label) + sigmoid: (query, document) pairs scored
     * for relevance; OIP {@code query} and {@code documents} to {@code scores}, {@code logits} and {@code tokens}
     * ({@code RerankIO}).
     */
    TEXT_RERANK("text-rerank", "logits"),
    /** Any ONNX model: OIP input tensors map by name to the model's inputs, outputs back. */
    TENSOR("tensor", ""),
    /** Returns its input tensors unchanged: the platform's own overhead, for benchmarks. */
    NOOP("noop", ""),
    /** Deployments called in turn, each step's outputs the next one's inputs ({@code steps}). */
    PIPELINE("pipeline", ""),
    /** A custom handler: Java code from a jar in the version folder ({@code jar}, {@code class}). */
    JAVA("java", "");

    private final String id;
    private final String defaultOutput;

    ModelKind(String id, String defaultOutput) {
        this.id = id;
        this.defaultOutput = defaultOutput;
    }

    /**
     * The name descriptors use: {@code text-embedding}, {@code text-classification}, {@code text-rerank},
     * {@code tensor}, {@code noop},
     * {@code pipeline}, {@code java}.
     */
    public String id() {
        return id;
    }

    /**
     * The graph output the kind reads unless a descriptor names another: the token embeddings
     * {@code last_hidden_state} [batch, seq, dim] of a text embedding model, the logits {@code logits} [batch, labels]
     * of a text classifier or a cross-encoder; empty for the kinds that read no single output.
     */
    public String defaultOutput() {
        return defaultOutput;
    }

    /**
     * Whether the kind calls other deployments or runs the user's code (pipeline, java): a whole request is one
     * invocation ({@link InvocationIO}) that carries the caller's context, and the model runs no ONNX graph.
     */
    public boolean composite() {
        return this == PIPELINE || this == JAVA;
    }

    /**
     * Whether the kind is a text model: a tokenizer in front of an ONNX graph, one result per text (per (query,
     * document) pair for a cross-encoder).
     */
    public boolean text() {
        return this == TEXT_EMBEDDING || this == TEXT_CLASSIFICATION || this == TEXT_RERANK;
    }

    /**
     * How a request's tensors become inputs of a model of this kind, known before any such model loaded: a text
     * model's {@code text} tensor (its strings), a cross-encoder's {@code query} and {@code documents} (bounded by
     * the default {@code max_documents_per_request}: the loaded model's own bound applies once it serves), any
     * other kind's whole request. The output side is the loaded
     * model's ({@link Model#io()}): this mapping's {@code outputs} refuses.
     */
    @SuppressWarnings("unchecked")
    public <I, O> TensorIO<I, O> inputsBeforeLoad() {
        if (composite()) {
            return (TensorIO<I, O>) InvocationIO.instance();
        }
        if (this == TEXT_RERANK) {
            return (TensorIO<I, O>) new RerankIO(ModelDescriptor.DEFAULT_MAX_DOCUMENTS_PER_REQUEST);
        }
        boolean text = text();
        return (TensorIO<I, O>) new TensorIO<Object, Object>() {
            @Override
            @SuppressWarnings("unchecked")
            public List<Object> inputs(Tensors request) {
                List<?> inputs = text ? TextIO.texts(request) : WholeRequestIO.instance().inputs(request);
                return (List<Object>) inputs;
            }

            @Override
            public Tensors outputs(List<Object> outputs) {
                throw new IllegalStateException("a " + id + " model's outputs are mapped by the model that answered");
            }
        };
    }

    public static Optional<ModelKind> of(String id) {
        return Arrays.stream(values()).filter(kind -> kind.id.equals(id)).findFirst();
    }

    public static String ids() {
        return String.join(", ", Arrays.stream(values()).map(ModelKind::id).toList());
    }
}
