package dev.serval.tensor;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Named tensors in a given order: one request's inputs or one answer's outputs for a tensor model. Immutable. Names
 * are unique; they are checked and looked up through a hash index built once, so a request with many inputs costs
 * linear time, never quadratic.
 */
public final class Tensors {

    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;

    /** @throws IllegalArgumentException when a name appears twice */
    public Tensors(List<Tensor> tensors) {
        this.tensors = List.copyOf(tensors);
        this.byName = HashMap.newHashMap(this.tensors.size());
        for (Tensor tensor : this.tensors) {
            if (byName.putIfAbsent(tensor.name(), tensor) != null) {
                throw new IllegalArgumentException("tensor '" + tensor.name() + "' appears twice");
            }
        }
    }

    /** The tensors, in order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    public Optional<Tensor> get(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    public int size() {
        return tensors.size();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Tensors that && tensors.equals(that.tensors);
    }

    @Override
    public int hashCode() {
        return tensors.hashCode();
    }

    @Override
    public String toString() {
        return "Tensors" + tensors;
    }
}
