package dev.serval.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.Spelling;
import dev.serval.model.onnx.OnnxOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The fields of a {@code model.yaml}, checked one by one into a {@link ModelDescriptor} (the steps, jar and class of
 * the composite kinds by {@link CompositeFields}). Every refusal names where the descriptor is, the field and what is
 * wrong. Stateless.
 */
final class DescriptorFields {

    /** The fields a descriptor may have, sorted (as refusals list them). */
    private static final List<String> FIELDS = List.of("class", "config", "description", "engine", "file", "jar",
            "kind", "labels", "matryoshka_dimensions", "max_documents_per_request", "max_length", "output",
            "quantization_ranges", "steps", "tokenizer");

    private static final List<String> KINDS = Stream.of(ModelKind.values()).map(ModelKind::id).toList();

    private DescriptorFields() {
    }

    /** See {@link ModelDescriptor#parse}. */
    static ModelDescriptor parse(JsonNode node, String where, Predicate<String> deploymentNames) {
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping with at least 'kind'");
        }
        onlyKnownFields(node, FIELDS, where);
        JsonNode kindNode = node.get("kind");
        ModelKind kind = kindNode == null || !kindNode.isTextual() ? null : ModelKind.of(kindNode.textValue()).orElse(null);
        if (kind == null) {
            throw new IllegalArgumentException(where + ": field 'kind' must be one of " + ModelKind.ids() + ", not "
                    + kindNode + (kindNode != null && kindNode.isTextual()
                    ? Spelling.suggestion(kindNode.textValue(), KINDS) : ""));
        }
        String file = relativePath(node, "file", "model.onnx", where);
        String tokenizer = relativePath(node, "tokenizer", "tokenizer.json", where);
        JsonNode maxLengthNode = node.get("max_length");
        int maxLength = 256;
        if (maxLengthNode != null) {
            if (!maxLengthNode.canConvertToInt() || !maxLengthNode.isIntegralNumber() || maxLengthNode.intValue() < 2) {
                throw new IllegalArgumentException(where + ": field 'max_length' must be a whole number >= 2, not "
                        + maxLengthNode);
            }
            maxLength = maxLengthNode.intValue();
        }
        int maxDocuments = maxDocumentsPerRequest(node.get("max_documents_per_request"), kind, where);
        String config = relativePath(node, "config", ModelDescriptor.DEFAULT_CONFIG, where);
        List<String> labels = labels(node.get("labels"), where);
        if (node.has("labels") && labels.isEmpty()) {
            throw new IllegalArgumentException(where + ": field 'labels' must name the logits in order; leave it out to"
                    + " take the names of the model's config.json (id2label)");
        }
        String output = "";
        JsonNode outputNode = node.get("output");
        if (outputNode != null) {
            if (!kind.text()) {
                throw new IllegalArgumentException(where + ": field 'output' names the graph output a text model reads;"
                        + " a " + kind.id() + " model " + (kind == ModelKind.TENSOR
                        ? "answers with every graph output under its own name" : "runs no graph"));
            }
            if (!outputNode.isTextual() || outputNode.textValue().isBlank()) {
                throw new IllegalArgumentException(where + ": field 'output' must be the name of a graph output, not "
                        + outputNode);
            }
            output = outputNode.textValue();
        }
        Map<String, String> engine = engine(node.get("engine"), kind, where);
        Composite composite = CompositeFields.composite(node, kind, where, deploymentNames);
        JsonNode description = node.get("description");
        OnnxOptions options;
        try {
            options = OnnxOptions.of(engine);
        } catch (IllegalArgumentException e) {
            // every other field was checked above with its own message: what the descriptor refuses is an engine option
            throw new IllegalArgumentException(where + ": field 'engine': " + e.getMessage(), e);
        }
        List<Integer> matryoshka = matryoshka(node.get("matryoshka_dimensions"), kind, where);
        String ranges = "";
        if (node.has("quantization_ranges")) {
            if (kind != ModelKind.TEXT_EMBEDDING) {
                throw new IllegalArgumentException(where + ": field 'quantization_ranges' is for text-embedding "
                        + "models, not " + kind.id());
            }
            ranges = relativePath(node, "quantization_ranges", "", where);
        }
        try {
            return new ModelDescriptor(kind, file, tokenizer, maxLength, labels, output, options,
                    description == null ? "" : description.asText(), composite, maxDocuments, config, matryoshka,
                    ranges);
        } catch (IllegalArgumentException e) {
            // what the record refuses beyond the fields checked above: engine options on a kind that runs no graph
            throw new IllegalArgumentException(where + ": field 'engine': " + e.getMessage(), e);
        }
    }

    /**
     * The descriptor's {@code matryoshka_dimensions}: a text-embedding model's list of widths, each a whole number from
     * 1 to 65,536, at most 64 of them; empty if absent. Whether each fits the model's width is checked at load.
     */
    private static List<Integer> matryoshka(JsonNode value, ModelKind kind, String where) {
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (kind != ModelKind.TEXT_EMBEDDING) {
            throw new IllegalArgumentException(where + ": field 'matryoshka_dimensions' is for text-embedding models, "
                    + "not " + kind.id());
        }
        if (!value.isArray() || value.isEmpty() || value.size() > 64) {
            throw new IllegalArgumentException(where + ": field 'matryoshka_dimensions' must be a list of 1 to 64 "
                    + "widths, not " + value);
        }
        List<Integer> widths = new ArrayList<>(value.size());
        for (JsonNode width : value) {
            if (!width.isIntegralNumber() || !width.canConvertToInt() || width.intValue() < 1
                    || width.intValue() > 65_536 || widths.contains(width.intValue())) {
                throw new IllegalArgumentException(where + ": field 'matryoshka_dimensions' must hold distinct whole "
                        + "numbers from 1 to 65536, not " + width);
            }
            widths.add(width.intValue());
        }
        return widths;
    }

    /** The descriptor's {@code max_documents_per_request}: a cross-encoder's, 1 to the limit; the default if absent. */
    private static int maxDocumentsPerRequest(JsonNode value, ModelKind kind, String where) {
        if (value == null) {
            return ModelDescriptor.DEFAULT_MAX_DOCUMENTS_PER_REQUEST;
        }
        if (kind != ModelKind.TEXT_RERANK) {
            throw new IllegalArgumentException(where + ": field 'max_documents_per_request' bounds the documents of a "
                    + "rerank request; a " + kind.id() + " model takes none");
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt() || value.intValue() < 1
                || value.intValue() > ModelDescriptor.MAX_DOCUMENTS_PER_REQUEST_LIMIT) {
            throw new IllegalArgumentException(where + ": field 'max_documents_per_request' must be a whole number "
                    + "from 1 to " + ModelDescriptor.MAX_DOCUMENTS_PER_REQUEST_LIMIT + ", not " + value);
        }
        return value.intValue();
    }

    /** Refuses a field of the mapping {@code node} that is not one of {@code known}, listing them as given. */
    static void onlyKnownFields(JsonNode node, List<String> known, String where) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!known.contains(field)) {
                throw new IllegalArgumentException(where + ": unknown field '" + field + "'"
                        + Spelling.suggestion(field, known) + "; known fields: " + known);
            }
        }
    }

    private static List<String> labels(JsonNode labelsNode, String where) {
        List<String> labels = new ArrayList<>();
        if (labelsNode != null) {
            if (!labelsNode.isArray()) {
                throw new IllegalArgumentException(where + ": field 'labels' must be a list of names");
            }
            labelsNode.forEach(label -> {
                if (!label.isTextual() || label.textValue().isBlank()) {
                    throw new IllegalArgumentException(where + ": field 'labels' must hold non-empty strings, not "
                            + label);
                }
                labels.add(label.textValue());
            });
        }
        return labels;
    }

    /**
     * The descriptor's {@code engine} mapping as option name to value, each a single value; whether ONNX Runtime
     * takes them is the descriptor's check ({@code OnnxOptions.of}).
     */
    private static Map<String, String> engine(JsonNode engineNode, ModelKind kind, String where) {
        if (engineNode == null) {
            return Map.of();
        }
        if (!engineNode.isObject()) {
            throw new IllegalArgumentException(where + ": field 'engine' must be a mapping of ONNX Runtime options");
        }
        if (kind == ModelKind.NOOP && !engineNode.isEmpty()) {
            throw new IllegalArgumentException(where + ": field 'engine' sets ONNX Runtime options; a noop model runs "
                    + "no graph");
        }
        Map<String, String> engine = new LinkedHashMap<>();
        engineNode.fields().forEachRemaining(option -> {
            if (!option.getValue().isValueNode()) {
                throw new IllegalArgumentException(where + ": engine option '" + option.getKey()
                        + "' must be a single value");
            }
            if (option.getValue().isNull()) {
                throw new IllegalArgumentException(where + ": engine option '" + option.getKey() + "' has no value");
            }
            engine.put(option.getKey(), option.getValue().asText());
        });
        return engine;
    }

    /**
     * The file name in {@code field}, relative to the version folder and never leaving it ({@code fallback} when the
     * field is absent).
     */
    static String relativePath(JsonNode node, String field, String fallback, String where) {
        JsonNode value = node.get(field);
        if (value == null) {
            return fallback;
        }
        if (!value.isTextual() || value.textValue().isBlank()) {
            throw new IllegalArgumentException(where + ": field '" + field + "' must be a file name, not " + value);
        }
        String path = value.textValue();
        Path parsed;
        try {
            parsed = Path.of(path);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(where + ": field '" + field + "' (" + path + ") is not a valid path");
        }
        if (parsed.isAbsolute() || path.startsWith("/") || path.startsWith("\\")) {
            throw new IllegalArgumentException(where + ": field '" + field + "' (" + path
                    + ") must be relative to the model's folder, not absolute");
        }
        for (Path part : parsed) {
            if (part.toString().equals("..")) {
                throw new IllegalArgumentException(where + ": field '" + field + "' (" + path
                        + ") must not contain '..': it would leave the model's folder");
            }
        }
        return path;
    }
}
