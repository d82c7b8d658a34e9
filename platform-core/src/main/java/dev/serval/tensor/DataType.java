package dev.serval.tensor;

import java.util.Optional;

/** The Open Inference Protocol tensor datatypes Serval carries, with their Java array representation. */
public enum DataType {
    /** {@code boolean[]}. */
    BOOL(1),
    /** {@code int[]}. */
    INT32(4),
    /** {@code long[]}. */
    INT64(8),
    /** {@code float[]}. */
    FP32(4),
    /** {@code double[]}. */
    FP64(8),
    /** {@code String[]}: UTF-8 text (the OIP binary extension carries each element length-prefixed). */
    BYTES(-1);

    private final int size;

    DataType(int size) {
        this.size = size;
    }

    /** Bytes per element in the binary tensor extension, or -1 for BYTES (length-prefixed elements). */
    public int byteSize() {
        return size;
    }

    /** The datatype called {@code name} in OIP ({@code FP32}...), if Serval carries it. */
    public static Optional<DataType> of(String name) {
        for (DataType type : values()) {
            if (type.name().equals(name)) {
                return Optional.of(type);
            }
        }
        return Optional.empty();
    }
}
