package dev.serval.api.repository;

import dev.serval.predictor.OnnxOptions;
import dev.serval.predictor.TextClassificationModel;
import dev.serval.predictor.TextEmbeddingModel;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code model.yaml} of one model version in the repository.
 *
 * @param kind        what the model is
 * @param file        the ONNX file, relative to the version folder ({@code model.onnx} by default; none for noop)
 * @param tokenizer   the Hugging Face {@code tokenizer.json}, relative to the version folder (text kinds)
 * @param maxLength   tokens a text model keeps per text, special tokens included (text kinds; default 256)
 * @param labels      the classifier's label names, in logit order (text-classification)
 * @param output      the graph output a text kind reads: {@code last_hidden_state} (text-embedding) or {@code logits}
 *                    (text-classification) unless the descriptor names another; empty for the other kinds. The
 *                    graph's inputs are not configurable: a text model takes {@code input_ids},
 *                    {@code attention_mask} and optionally {@code token_type_ids}; a tensor model's inputs and
 *                    outputs keep their graph names
 * @param engine      ONNX Runtime session options passed through DJL, checked ({@link OnnxOptions}); none for noop
 * @param description free text for people
 */
public record ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
        String output, OnnxOptions engine, String description) {

    /**
     * @throws IllegalArgumentException when a kind without a graph has engine options, or a kind that reads no single
     *                                  output names one
     */
    public ModelDescriptor {
        Objects.requireNonNull(kind, "kind");
        labels = List.copyOf(labels);
        Objects.requireNonNull(engine, "engine");
        if (kind == ModelKind.NOOP && !engine.values().isEmpty()) {
            throw new IllegalArgumentException("a noop model runs no ONNX graph and takes no engine options");
        }
        if (output == null || output.isEmpty()) {
            output = defaultOutput(kind);
        } else if (!kind.text()) {
            throw new IllegalArgumentException("a " + kind.id() + " model reads no single output; 'output' is for "
                    + "text kinds");
        }
    }

    /** A descriptor whose text kinds read their default output ({@link #defaultOutput}). */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            Map<String, String> engine, String description) {
        this(kind, file, tokenizer, maxLength, labels, "", OnnxOptions.of(engine), description);
    }

    /** The graph output {@code kind} reads unless a descriptor names another; empty when it reads none alone. */
    public static String defaultOutput(ModelKind kind) {
        return switch (kind) {
            case TEXT_EMBEDDING -> TextEmbeddingModel.DEFAULT_OUTPUT;
            case TEXT_CLASSIFICATION -> TextClassificationModel.DEFAULT_OUTPUT;
            case TENSOR, NOOP -> "";
        };
    }
}
