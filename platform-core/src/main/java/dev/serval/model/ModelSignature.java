package dev.serval.model;

import java.util.List;
import java.util.Objects;

/**
 * What a model takes and returns.
 *
 * @param platform the OIP platform string, for example {@code onnxruntime_onnx}
 * @param inputs   the input tensors
 * @param outputs  the output tensors
 */
public record ModelSignature(String platform, List<TensorSignature> inputs, List<TensorSignature> outputs) {

    public ModelSignature {
        Objects.requireNonNull(platform, "platform");
        inputs = List.copyOf(inputs);
        outputs = List.copyOf(outputs);
    }
}
