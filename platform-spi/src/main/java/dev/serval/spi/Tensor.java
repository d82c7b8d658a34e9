package dev.serval.spi;

import java.util.Arrays;
import java.util.Objects;

/**
 * One named tensor: an element type, a shape, and its elements in row-major order. Serval hands a handler the arrays
 * it decoded and takes the handler's arrays as they are (no copy either way): a handler must not modify an input's
 * array, nor an output's once returned.
 *
 * @param name     the tensor's name, for example {@code text}
 * @param datatype the element type, which fixes the class of {@code data} ({@link DataType#arrayClass()})
 * @param shape    the dimensions, each &ge; 0
 * @param data     the elements, exactly as many as the shape holds
 */
public record Tensor(String name, DataType datatype, long[] shape, Object data) {

    /** @throws IllegalArgumentException when the data is not the datatype's array or does not fill the shape */
    public Tensor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(datatype, "datatype");
        Objects.requireNonNull(shape, "shape");
        Objects.requireNonNull(data, "data");
        if (data.getClass() != datatype.arrayClass()) {
            throw new IllegalArgumentException("tensor '" + name + "' is " + datatype + " but its data is a "
                    + data.getClass().getSimpleName());
        }
        long elements = 1;
        for (long dimension : shape) {
            if (dimension < 0) {
                throw new IllegalArgumentException("tensor '" + name + "' has a negative dimension in shape "
                        + Arrays.toString(shape));
            }
            elements = Math.multiplyExact(elements, dimension);
        }
        int length = java.lang.reflect.Array.getLength(data);
        if (length != elements) {
            throw new IllegalArgumentException("tensor '" + name + "' has shape " + Arrays.toString(shape) + " ("
                    + elements + " elements) but " + length + " data elements");
        }
    }

    public static Tensor of(String name, float[] data, long... shape) {
        return new Tensor(name, DataType.FP32, shape, data);
    }

    public static Tensor of(String name, double[] data, long... shape) {
        return new Tensor(name, DataType.FP64, shape, data);
    }

    public static Tensor of(String name, int[] data, long... shape) {
        return new Tensor(name, DataType.INT32, shape, data);
    }

    public static Tensor of(String name, long[] data, long... shape) {
        return new Tensor(name, DataType.INT64, shape, data);
    }

    public static Tensor of(String name, boolean[] data, long... shape) {
        return new Tensor(name, DataType.BOOL, shape, data);
    }

    public static Tensor of(String name, String[] data, long... shape) {
        return new Tensor(name, DataType.BYTES, shape, data);
    }

    /** This tensor under another name, sharing its data. */
    public Tensor withName(String newName) {
        return new Tensor(newName, datatype, shape, data);
    }

    /** The elements of an FP32 tensor. @throws InvalidInputException when it is another type */
    public float[] floats() {
        return as(DataType.FP32, float[].class);
    }

    /** The elements of an FP64 tensor. @throws InvalidInputException when it is another type */
    public double[] doubles() {
        return as(DataType.FP64, double[].class);
    }

    /** The elements of an INT32 tensor. @throws InvalidInputException when it is another type */
    public int[] ints() {
        return as(DataType.INT32, int[].class);
    }

    /** The elements of an INT64 tensor. @throws InvalidInputException when it is another type */
    public long[] longs() {
        return as(DataType.INT64, long[].class);
    }

    /** The elements of a BOOL tensor. @throws InvalidInputException when it is another type */
    public boolean[] bools() {
        return as(DataType.BOOL, boolean[].class);
    }

    /** The elements of a BYTES tensor. @throws InvalidInputException when it is another type */
    public String[] strings() {
        return as(DataType.BYTES, String[].class);
    }

    private <T> T as(DataType expected, Class<T> type) {
        if (datatype != expected) {
            throw new InvalidInputException("tensor '" + name + "' is " + datatype + "; " + expected + " is expected");
        }
        return type.cast(data);
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
