package dev.serval.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Function;

/**
 * A text-embedding model's calibrated per-dimension ranges, from which its vectors are written as one byte per
 * dimension ({@code encoding_format} int8 and uint8), exactly as sentence-transformers'
 * {@code quantize_embeddings(embeddings, precision, ranges)} computes them: {@code starts = ranges[0]},
 * {@code steps = (ranges[1] - ranges[0]) / 255}, uint8 {@code = (int) ((e - starts) / steps)}, int8 that minus 128,
 * in float32 arithmetic as numpy does on float32 arrays. A value outside its range is clamped to it (0..255,
 * -128..127), where numpy's cast would wrap around; within the ranges the two agree. Immutable (the arrays are copied in
 * and never handed out).
 *
 * @param minimums each dimension's lowest calibrated value
 * @param maximums each dimension's highest, above its minimum
 */
public record QuantizationRanges(float[] minimums, float[] maximums) {

    /** The largest ranges file read: two rows of 65,536 numbers written in full take about 3 MB. */
    public static final long MAX_FILE_BYTES = 4L * 1024 * 1024;
    /** The widest model the ranges may describe (as {@code matryoshka_dimensions}' bound). */
    public static final int MAX_WIDTH = 65_536;

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * @throws IllegalArgumentException when the rows differ in width, a number is not finite or a maximum is not above
     *                                  its minimum
     */
    public QuantizationRanges {
        minimums = minimums.clone();
        maximums = maximums.clone();
        if (minimums.length == 0 || minimums.length > MAX_WIDTH || minimums.length != maximums.length) {
            throw new IllegalArgumentException("must be two rows of the same width, 1 to " + MAX_WIDTH + ", not "
                    + minimums.length + " and " + maximums.length);
        }
        for (int j = 0; j < minimums.length; j++) {
            if (!Float.isFinite(minimums[j]) || !Float.isFinite(maximums[j])) {
                throw new IllegalArgumentException("dimension " + j + " has a number that is not a finite float: "
                        + minimums[j] + ", " + maximums[j]);
            }
            if (!(maximums[j] > minimums[j]) || !Float.isFinite((maximums[j] - minimums[j]) / 255f)
                    || (maximums[j] - minimums[j]) / 255f == 0f) {
                throw new IllegalArgumentException("dimension " + j + ": the maximum " + maximums[j]
                        + " must be above the minimum " + minimums[j]);
            }
        }
    }

    /**
     * Reads a ranges file: a JSON array of two arrays of numbers, the per-dimension minimums then maximums (the shape
     * of sentence-transformers' {@code ranges} argument). The file is not read past {@link #MAX_FILE_BYTES}.
     *
     * @throws IllegalArgumentException a one-line message saying what is wrong with the file (its name is the caller's)
     * @throws IOException              when it cannot be read
     */
    public static QuantizationRanges read(Path file) throws IOException {
        long size = Files.size(file);
        if (size > MAX_FILE_BYTES) {
            throw new IllegalArgumentException("is " + size + " bytes; at most " + MAX_FILE_BYTES + " are read");
        }
        JsonNode root;
        try {
            root = JSON.readTree(Files.readAllBytes(file));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("is not JSON: " + e.getOriginalMessage().replaceAll("\\s+", " "), e);
        }
        if (root == null || !root.isArray() || root.size() != 2 || !root.get(0).isArray() || !root.get(1).isArray()) {
            throw new IllegalArgumentException("must be a JSON array of two arrays, [[minimums...], [maximums...]]");
        }
        return new QuantizationRanges(row(root.get(0), "minimums"), row(root.get(1), "maximums"));
    }

    private static float[] row(JsonNode row, String name) {
        if (row.size() > MAX_WIDTH) {
            throw new IllegalArgumentException("the " + name + " hold " + row.size() + " numbers; at most " + MAX_WIDTH);
        }
        float[] values = new float[row.size()];
        for (int j = 0; j < values.length; j++) {
            JsonNode value = row.get(j);
            if (!value.isNumber()) {
                throw new IllegalArgumentException("the " + name + " hold " + value + " at " + j + ", not a number");
            }
            values[j] = (float) value.doubleValue();
        }
        return values;
    }

    /** Each dimension's lowest calibrated value (a copy). */
    @Override
    public float[] minimums() {
        return minimums.clone();
    }

    /** Each dimension's highest calibrated value (a copy). */
    @Override
    public float[] maximums() {
        return maximums.clone();
    }

    /** The number of dimensions the ranges describe. */
    public int width() {
        return minimums.length;
    }

    /**
     * A vector as one integer per dimension, int8 ({@code signed}) or uint8: what {@code encoding_format} int8 and
     * uint8 answer. A vector narrower than the ranges (a Matryoshka cut) takes the ranges of its first dimensions.
     *
     * @throws IllegalArgumentException (the function) when a vector is wider than the ranges
     */
    public Function<float[], int[]> encoder(boolean signed) {
        return vector -> {
            if (vector.length > minimums.length) {
                throw new IllegalArgumentException("a vector of " + vector.length + " dimensions; the ranges have "
                        + minimums.length);
            }
            int[] values = new int[vector.length];
            for (int j = 0; j < vector.length; j++) {
                values[j] = signed ? int8(vector[j], j) : uint8(vector[j], j);
            }
            return values;
        };
    }

    /** Element {@code j} of a vector as uint8, 0..255 (int8 is this minus 128). */
    public int uint8(float value, int j) {
        float step = (maximums[j] - minimums[j]) / 255f;
        float scaled = (value - minimums[j]) / step;
        // NaN compares false both ways and lands on 0, as numpy's cast of NaN does on common platforms
        return scaled >= 255f ? 255 : scaled > 0f ? (int) scaled : 0;
    }

    /**
     * Element {@code j} of a vector as int8, -128..127: {@code (int) ((e - starts) / steps - 128)}, truncated toward
     * zero after the subtraction as numpy's cast is (not the uint8 value minus 128, which differs below the midpoint).
     */
    public int int8(float value, int j) {
        float step = (maximums[j] - minimums[j]) / 255f;
        float shifted = (value - minimums[j]) / step - 128f;
        return shifted >= 127f ? 127 : shifted <= -128f ? -128 : (int) shifted;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof QuantizationRanges ranges && Arrays.equals(minimums, ranges.minimums)
                && Arrays.equals(maximums, ranges.maximums);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(minimums) + Arrays.hashCode(maximums);
    }

    @Override
    public String toString() {
        return "QuantizationRanges[" + minimums.length + " dimensions]";
    }
}
