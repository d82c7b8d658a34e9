package dev.serval.model.text;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import java.util.List;

/**
 * What a text model kind makes of its ONNX outputs: one result per text of a padded batch, and one result for a long
 * text from the results of its windows. Stateless and thread-safe; runs on predictor threads.
 *
 * @param <O> the result of one text
 */
interface TextHead<O> {

    /** The graph output the head reads; {@link TextParts#load} checks that the graph has it. */
    String output();

    /**
     * The results of one inference, in row order.
     *
     * @param output the graph's outputs, by name, for {@code masks.length} rows padded to {@code masks[0].length}
     *               tokens
     * @param masks  each row's attention mask over the padded width: 1 for a real token, 0 for padding
     * @throws IllegalStateException when {@link #output()} is missing or does not have the shape the kind expects
     */
    List<O> rows(NDList output, long[][] masks);

    /** The result of a text split into windows, from the windows' results in text order (at least two). */
    O combine(List<O> windows);

    /** The largest element-wise difference between two results of the same text (the batch-invariance probe). */
    double difference(O a, O b);

    /** The array called {@code name} among {@code outputs}. */
    static NDArray named(NDList outputs, String name) {
        NDArray array = outputs.get(name);
        if (array == null) {
            throw new IllegalStateException("the model returned no output '" + name + "'; it returned "
                    + outputs.stream().map(NDArray::getName).toList());
        }
        return array;
    }

    /** The real tokens of a row: the ones its attention mask marks. */
    static int tokens(long[] mask) {
        int tokens = 0;
        for (long m : mask) {
            tokens += (int) m;
        }
        return tokens;
    }

    /** The largest absolute difference between elements of the same index. */
    static double maxDifference(float[] a, float[] b) {
        if (a.length != b.length) {
            return Double.POSITIVE_INFINITY;
        }
        double max = 0;
        for (int i = 0; i < a.length; i++) {
            max = Math.max(max, Math.abs(a[i] - b[i]));
        }
        return max;
    }

    /**
     * {@code output}, checked as the name of a graph output to read.
     *
     * @throws IllegalArgumentException when it is null or blank
     */
    static String outputName(String output) {
        if (output == null || output.isBlank()) {
            throw new IllegalArgumentException("the output to read must be a graph output's name, not '" + output + "'");
        }
        return output;
    }
}
