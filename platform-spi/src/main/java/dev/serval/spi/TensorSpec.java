package dev.serval.spi;

import java.util.Arrays;
import java.util.Objects;

/**
 * A tensor a handler takes or returns, as its metadata shows it ({@code GET /v2/models/{name}}) and as a pipeline
 * checks the steps around it.
 *
 * @param name     the tensor's name
 * @param datatype its element type
 * @param shape    its dimensions; -1 for a dimension of any size
 */
public record TensorSpec(String name, DataType datatype, long... shape) {

    public TensorSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(datatype, "datatype");
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TensorSpec that && name.equals(that.name) && datatype == that.datatype
                && Arrays.equals(shape, that.shape);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, datatype, Arrays.hashCode(shape));
    }

    @Override
    public String toString() {
        return name + " " + datatype + " " + Arrays.toString(shape);
    }
}
