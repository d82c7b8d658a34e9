package dev.serval.tensor;

import java.util.Arrays;
import java.util.Objects;

/**
 * One named tensor: a datatype, a shape and its elements in row-major order. The data array is owned by the tensor
 * once created and never modified.
 *
 * @param name     the tensor's name, for example {@code text} or {@code input}
 * @param datatype the element type, which fixes the class of {@code data}
 * @param shape    the dimensions, each &ge; 0
 * @param data     {@code boolean[]}, {@code int[]}, {@code long[]}, {@code float[]}, {@code double[]} or {@code String[]}
 *                 as {@code datatype} says, with exactly as many elements as the shape holds
 */
public record Tensor(String name, DataType datatype, long[] shape, Object data) {

    public Tensor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(datatype, "datatype");
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(data, "data");
        long elements = elementCount(shape);
        Class<?> expected = arrayClass(datatype);
        if (data.getClass() != expected) {
            throw new IllegalArgumentException("tensor '" + name + "' is " + datatype + " but its data is a "
                    + data.getClass().getSimpleName());
        }
        int length = java.lang.reflect.Array.getLength(data);
        if (length != elements) {
            throw new IllegalArgumentException("tensor '" + name + "' has shape " + Arrays.toString(shape) + " ("
                    + elements + " elements) but " + length + " data elements");
        }
    }

    /** The number of elements a shape holds. */
    public static long elementCount(long[] shape) {
        long elements = 1;
        for (long dim : shape) {
            if (dim < 0) {
                throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has a negative dimension");
            }
            elements = Math.multiplyExact(elements, dim);
        }
        return elements;
    }

    /** The Java array class that holds elements of {@code datatype}. */
    public static Class<?> arrayClass(DataType datatype) {
        return switch (datatype) {
            case BOOL -> boolean[].class;
            case INT32 -> int[].class;
            case INT64 -> long[].class;
            case FP32 -> float[].class;
            case FP64 -> double[].class;
            case BYTES -> String[].class;
        };
    }

    public int size() {
        return java.lang.reflect.Array.getLength(data);
    }

    /** A copy of the shape. */
    public long[] shapeCopy() {
        return shape.clone();
    }

    /** This tensor under another name, sharing its data. */
    public Tensor withName(String newName) {
        return new Tensor(newName, datatype, shape, data);
    }

    public static Tensor of(String name, float[] data, long... shape) {
        return new Tensor(name, DataType.FP32, shape, data);
    }

    public static Tensor of(String name, String[] data, long... shape) {
        return new Tensor(name, DataType.BYTES, shape, data);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Tensor that && name.equals(that.name) && datatype == that.datatype
                && Arrays.equals(shape, that.shape) && Objects.deepEquals(data, that.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, datatype, Arrays.hashCode(shape));
    }

    @Override
    public String toString() {
        return "Tensor[" + name + ", " + datatype + ", " + Arrays.toString(shape) + "]";
    }
}
