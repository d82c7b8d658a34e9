package dev.serval.spi;

/**
 * A tensor's element type, as the Open Inference Protocol names it, with the Java array that holds its elements.
 */
public enum DataType {
    /** {@code boolean[]} */
    BOOL,
    /** {@code int[]} */
    INT32,
    /** {@code long[]} */
    INT64,
    /** {@code float[]} */
    FP32,
    /** {@code double[]} */
    FP64,
    /** {@code String[]} (UTF-8 strings on the wire) */
    BYTES;

    /** The Java array class that holds elements of this type. */
    public Class<?> arrayClass() {
        return switch (this) {
            case BOOL -> boolean[].class;
            case INT32 -> int[].class;
            case INT64 -> long[].class;
            case FP32 -> float[].class;
            case FP64 -> double[].class;
            case BYTES -> String[].class;
        };
    }
}
