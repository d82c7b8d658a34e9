package dev.serval.model.text;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import dev.serval.model.Embedding;
import dev.serval.model.TokenVectors;
import java.util.ArrayList;
import java.util.List;

/**
 * Sentence embeddings from an encoder, as sentence-transformers makes them: masked mean pooling over the token
 * embeddings [batch, seq, dim] (the graph output {@code last_hidden_state}, unless the model names it otherwise), then
 * L2 normalisation; a long text's windows are averaged and renormalised. Each embedding keeps the length it had
 * before its normalisation ({@link Embedding#norm}). Pooling runs in Java on the predictor thread. Stateless.
 *
 * <p>Each embedding of a text read in one inference also carries its token embeddings unpooled
 * ({@link Embedding#tokenVectors}, TEI's {@code /embed_all}): a view of its row's real tokens in the inference's
 * output array, which the pooling reads anyway, so it costs no copy and no work; rows are right-padded, so a row's
 * real tokens are its first ones. The array lives as long as its request's answer; what is cached drops the view. A
 * text read in windows has none: its windows' tokens overlap and are not one sequence.
 */
final class MeanPoolingHead implements TextHead<Embedding> {

    private final String output;

    /** @param output the graph output holding the token embeddings */
    MeanPoolingHead(String output) {
        this.output = output;
    }

    @Override
    public String output() {
        return output;
    }

    @Override
    public List<Embedding> rows(NDList outputs, long[][] masks) {
        NDArray hidden = TextHead.named(outputs, output);
        Shape shape = hidden.getShape();
        int rows = masks.length;
        int width = masks[0].length;
        if (shape.dimension() != 3 || shape.get(0) != rows || shape.get(1) != width) {
            throw new IllegalStateException("expected output '" + output + "' to hold token embeddings [" + rows + ", "
                    + width + ", dim], got " + shape);
        }
        int dimension = (int) shape.get(2);
        float[] all = hidden.toFloatArray();
        List<Embedding> embeddings = new ArrayList<>(rows);
        int rowSize = width * dimension;
        for (int r = 0; r < rows; r++) {
            embeddings.add(meanPool(all, r * rowSize, masks[r], dimension));
        }
        return embeddings;
    }

    /**
     * The mean of the window embeddings, renormalised; its norm is the mean's length before that; tokens are those of
     * all windows.
     */
    @Override
    public Embedding combine(List<Embedding> windows) {
        int dimension = windows.getFirst().vector().length;
        double[] sum = new double[dimension];
        int tokens = 0;
        for (Embedding window : windows) {
            tokens += window.tokens();
            float[] vector = window.vector();
            for (int d = 0; d < dimension; d++) {
                sum[d] += vector[d];
            }
        }
        double norm = 0;
        for (double value : sum) {
            norm += value * value;
        }
        norm = Math.sqrt(norm);
        double divisor = Math.max(norm, 1e-12);
        float[] combined = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            combined[d] = (float) (sum[d] / divisor);
        }
        return new Embedding(combined, tokens, (float) (norm / windows.size()));
    }

    @Override
    public double difference(Embedding a, Embedding b) {
        return TextHead.maxDifference(a.vector(), b.vector());
    }

    /**
     * Masked mean over the sequence axis of a [seq, dim] row-major matrix starting at {@code start} in {@code hidden}
     * (one row of a batch's [rows, seq, dim] output, read in place), then L2 normalisation; the embedding keeps the
     * mean's length as its norm, and a view of the row's real tokens (the first ones: rows are right-padded).
     */
    static Embedding meanPool(float[] hidden, int start, long[] mask, int dimension) {
        double[] sum = new double[dimension];
        int counted = 0;
        for (int position = 0; position < mask.length; position++) {
            if (mask[position] == 0) {
                continue;
            }
            counted++;
            int offset = start + position * dimension;
            for (int d = 0; d < dimension; d++) {
                sum[d] += hidden[offset + d];
            }
        }
        double divisor = Math.max(counted, 1e-9);
        double norm = 0;
        for (int d = 0; d < dimension; d++) {
            sum[d] /= divisor;
            norm += sum[d] * sum[d];
        }
        norm = Math.sqrt(norm);
        double length = Math.max(norm, 1e-12);
        float[] vector = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            vector[d] = (float) (sum[d] / length);
        }
        int tokens = TextHead.tokens(mask);
        return new Embedding(vector, tokens, (float) norm,
                tokens == 0 ? null : new TokenVectors(hidden, start, tokens, dimension));
    }
}
