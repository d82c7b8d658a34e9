package dev.serval.api.repository;

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
 * @param engine      ONNX Runtime session options passed through DJL ({@code key: value}), possibly empty
 * @param description free text for people
 */
public record ModelDescriptor(ModelKind kind, String file, String tokenizer, int maxLength, List<String> labels,
        Map<String, String> engine, String description) {

    public ModelDescriptor {
        Objects.requireNonNull(kind, "kind");
        labels = List.copyOf(labels);
        engine = Map.copyOf(engine);
    }
}
