package dev.serval.model;

import java.util.List;
import java.util.Objects;

/**
 * One named tensor a model takes or returns, in Open Inference Protocol terms.
 *
 * @param name     the tensor name, for example {@code text}
 * @param datatype the OIP datatype, for example {@code BYTES} or {@code FP32}
 * @param shape    the shape; {@code -1} marks a dimension of variable size
 */
public record TensorSignature(String name, String datatype, List<Long> shape) {

    public TensorSignature {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(datatype, "datatype");
        shape = List.copyOf(shape);
    }
}
