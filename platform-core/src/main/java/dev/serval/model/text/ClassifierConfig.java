package dev.serval.model.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a Hugging Face {@code config.json} says about a sequence classifier: its label names ({@code id2label}, in logit
 * order) and whether its labels exclude each other ({@code problem_type}: {@code multi_label_classification} means each
 * label is a yes/no of its own, scored by a sigmoid; anything else, or none, one label of all, scored by a softmax, as
 * transformers' {@code text-classification} pipeline does).
 *
 * @param labels     the names of {@code id2label} by id 0 to n-1; empty when the file has none
 * @param multiLabel whether {@code problem_type} is {@code multi_label_classification}
 */
record ClassifierConfig(List<String> labels, boolean multiLabel) {

    /** What a classifier without a {@code config.json} is: labels from its descriptor, softmax. */
    static final ClassifierConfig NONE = new ClassifierConfig(List.of(), false);

    ClassifierConfig {
        labels = List.copyOf(labels);
    }

    /**
     * Reads {@code file}; {@link #NONE} when {@code file} is null or does not exist.
     *
     * @throws IOException naming the file when it is unreadable, not JSON, or its {@code id2label} is not the ids 0 to
     *                     n-1 each with a non-empty name
     */
    static ClassifierConfig read(Path file) throws IOException {
        if (file == null || !Files.isRegularFile(file)) {
            return NONE;
        }
        if (Files.size(file) > 16 << 20) {
            throw new IOException("config " + file + " is over 16 MB; a model's config.json is a few KB");
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new IOException("config " + file + " is not JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IOException("config " + file + " is not a JSON object");
        }
        JsonNode problem = root.get("problem_type");
        boolean multiLabel = problem != null && "multi_label_classification".equals(problem.asText());
        JsonNode id2label = root.get("id2label");
        List<String> labels = new ArrayList<>();
        if (id2label != null && id2label.isObject()) {
            for (int id = 0; id < id2label.size(); id++) {
                JsonNode name = id2label.get(Integer.toString(id));
                if (name == null || !name.isTextual() || name.textValue().isBlank()) {
                    throw new IOException("config " + file + ": id2label must name every id from 0 to "
                            + (id2label.size() - 1) + "; id " + id + " has " + name);
                }
                labels.add(name.textValue());
            }
        }
        return new ClassifierConfig(labels, multiLabel);
    }
}
