package dev.serval.tensor;

import java.util.List;
import java.util.Optional;

/**
 * Named tensors in a given order: one request's inputs or one answer's outputs for a tensor model.
 *
 * @param tensors the tensors; names are unique
 */
public record Tensors(List<Tensor> tensors) {

    public Tensors {
        tensors = List.copyOf(tensors);
        for (int i = 0; i < tensors.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (tensors.get(i).name().equals(tensors.get(j).name())) {
                    throw new IllegalArgumentException("tensor '" + tensors.get(i).name() + "' appears twice");
                }
            }
        }
    }

    public Optional<Tensor> get(String name) {
        for (Tensor tensor : tensors) {
            if (tensor.name().equals(name)) {
                return Optional.of(tensor);
            }
        }
        return Optional.empty();
    }

    public int size() {
        return tensors.size();
    }
}
