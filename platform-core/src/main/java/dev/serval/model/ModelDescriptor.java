package dev.serval.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.model.onnx.OnnxOptions;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

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
 * @param composite   a pipeline's steps or a custom handler's jar and class; null for every other kind
 * @param maxDocumentsPerRequest the most documents one request to a cross-encoder may hold, 1 to
 *                    {@value #MAX_DOCUMENTS_PER_REQUEST_LIMIT} ({@value #DEFAULT_MAX_DOCUMENTS_PER_REQUEST} unless the
 *                    descriptor says; text-rerank); a request with more is refused before any pair is made
 * @param config      the Hugging Face {@code config.json}, relative to the version folder ({@code config.json} by
 *                    default): a classifier's {@code problem_type} and {@code id2label} (text-classification); read
 *                    only when present
 * @param matryoshkaDimensions the widths a text-embedding model was trained to be cut to (Matryoshka representation
 *                    learning), which a request's {@code dimensions} may ask for: its vectors are then cut to that width
 *                    and normalised again; empty for a model that declares none (then only its full width is served)
 * @param quantizationRanges the file, relative to the version folder, of a text-embedding model's calibrated
 *                    per-dimension ranges ({@link QuantizationRanges}, read and checked against the model's width at
 *                    load), which {@code encoding_format} int8 and uint8 need; empty for a model that declares none
 */
public record ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
        String output, OnnxOptions engine, String description, Composite composite, int maxDocumentsPerRequest,
        String config, List<Integer> matryoshkaDimensions, String quantizationRanges) {

    /** Documents per rerank request unless the descriptor says otherwise. */
    public static final int DEFAULT_MAX_DOCUMENTS_PER_REQUEST = 1000;
    /** The most a descriptor may allow: each document is one pair, one tokenisation and one inference row. */
    public static final int MAX_DOCUMENTS_PER_REQUEST_LIMIT = 100_000;
    /** The {@code config} of a descriptor that names none. */
    public static final String DEFAULT_CONFIG = "config.json";

    /**
     * @throws IllegalArgumentException when a kind without a graph has engine options, or a kind that reads no single
     *                                  output names one
     */
    public ModelDescriptor {
        Objects.requireNonNull(kind, "kind");
        labels = List.copyOf(labels);
        Objects.requireNonNull(engine, "engine");
        if ((kind == ModelKind.NOOP || kind.composite()) && !engine.values().isEmpty()) {
            throw new IllegalArgumentException("a " + kind.id() + " model runs no ONNX graph and takes no engine "
                    + "options");
        }
        boolean fits = switch (kind) {
            case PIPELINE -> composite instanceof Composite.Pipeline;
            case JAVA -> composite instanceof Composite.JavaHandler;
            default -> composite == null;
        };
        if (!fits) {
            throw new IllegalArgumentException(kind == ModelKind.PIPELINE ? "a pipeline needs its steps"
                    : kind == ModelKind.JAVA ? "a java model needs its jar and class"
                    : "a " + kind.id() + " model has no steps, jar or class");
        }
        if (maxDocumentsPerRequest < 1 || maxDocumentsPerRequest > MAX_DOCUMENTS_PER_REQUEST_LIMIT) {
            throw new IllegalArgumentException("max_documents_per_request must be between 1 and "
                    + MAX_DOCUMENTS_PER_REQUEST_LIMIT + ", was " + maxDocumentsPerRequest);
        }
        Objects.requireNonNull(config, "config");
        matryoshkaDimensions = List.copyOf(matryoshkaDimensions);
        if (!matryoshkaDimensions.isEmpty() && kind != ModelKind.TEXT_EMBEDDING) {
            throw new IllegalArgumentException("matryoshka_dimensions are a text-embedding model's; a " + kind.id()
                    + " model answers no embedding");
        }
        Objects.requireNonNull(quantizationRanges, "quantizationRanges");
        if (!quantizationRanges.isEmpty() && kind != ModelKind.TEXT_EMBEDDING) {
            throw new IllegalArgumentException("quantization_ranges are a text-embedding model's; a " + kind.id()
                    + " model answers no embedding");
        }
        if (output == null || output.isEmpty()) {
            output = kind.defaultOutput();
        } else if (!kind.text()) {
            throw new IllegalArgumentException("a " + kind.id() + " model reads no single output; 'output' is for "
                    + "text kinds");
        }
    }

    /** A descriptor that declares no quantisation ranges. */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, OnnxOptions engine, String description, Composite composite, int maxDocumentsPerRequest,
            String config, List<Integer> matryoshkaDimensions) {
        this(kind, file, tokenizer, maxLength, labels, output, engine, description, composite, maxDocumentsPerRequest,
                config, matryoshkaDimensions, "");
    }

    /** A descriptor that declares no Matryoshka dimensions. */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, OnnxOptions engine, String description, Composite composite, int maxDocumentsPerRequest,
            String config) {
        this(kind, file, tokenizer, maxLength, labels, output, engine, description, composite, maxDocumentsPerRequest,
                config, List.of());
    }

    /**
     * A descriptor of any kind with the default {@code max_documents_per_request} and {@code config}.
     *
     * @throws IllegalArgumentException as the canonical constructor
     */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, OnnxOptions engine, String description, Composite composite) {
        this(kind, file, tokenizer, maxLength, labels, output, engine, description, composite,
                DEFAULT_MAX_DOCUMENTS_PER_REQUEST, DEFAULT_CONFIG);
    }

    /** A descriptor of a kind that is not composite (no steps, no handler). */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, OnnxOptions engine, String description) {
        this(kind, file, tokenizer, maxLength, labels, output, engine, description, null);
    }

    /**
     * A descriptor with its engine options as a {@code model.yaml} writes them, checked ({@link OnnxOptions#of}).
     *
     * @throws IllegalArgumentException as the canonical constructor, or naming the engine option and what is wrong
     */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, Map<String, String> engine, String description) {
        this(kind, file, tokenizer, maxLength, labels, output, engine, description, null);
    }

    /**
     * A descriptor of any kind with its engine options as a {@code model.yaml} writes them, checked
     * ({@link OnnxOptions#of}).
     *
     * @throws IllegalArgumentException as the canonical constructor, or naming the engine option and what is wrong
     */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            String output, Map<String, String> engine, String description, Composite composite) {
        this(kind, file, tokenizer, maxLength, labels, output, OnnxOptions.of(engine), description, composite);
    }

    /**
     * Checks and reads a {@code model.yaml} as parsed (a mapping of its fields): the model repository's descriptors.
     *
     * @param where           names the descriptor in errors (model, version, file)
     * @param deploymentNames what a deployment name is (a pipeline step names the deployments it calls; the rule is
     *                        the deployment spec's, above this package)
     * @throws IllegalArgumentException naming {@code where}, the field and what is wrong with it
     */
    public static ModelDescriptor parse(JsonNode node, String where, Predicate<String> deploymentNames) {
        return DescriptorFields.parse(node, where, deploymentNames);
    }

    /** A descriptor whose text kinds read their default output ({@link ModelKind#defaultOutput}). */
    public ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
            Map<String, String> engine, String description) {
        this(kind, file, tokenizer, maxLength, labels, "", engine, description);
    }

}
