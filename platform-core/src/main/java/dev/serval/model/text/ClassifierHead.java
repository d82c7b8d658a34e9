package dev.serval.model.text;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import dev.serval.model.ChunkReduction;
import dev.serval.model.Classification;
import dev.serval.model.ModelKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Classifications from a sequence classifier: the softmax of each row of the logits [batch, labels] (the graph output
 * {@code logits}, unless the model names it otherwise), computed in double precision and shifted by the row's maximum
 * so that large logits do not overflow; or, for a multi-label model ({@link ClassifierConfig#multiLabel}), each logit's
 * sigmoid. The logits are kept beside the scores (raw scores). A long text's windows are combined by a
 * {@link ChunkReduction}: softmax probabilities by {@link ChunkReduction#reduce}, sigmoid scores and logits label by
 * label ({@link ChunkReduction#reduceEach}). Stateless.
 */
final class ClassifierHead implements TextHead<Classification> {

    private final ChunkReduction reduction;

    private final String output;
    private final boolean multiLabel;

    /**
     * @param output     the graph output holding the logits
     * @param multiLabel sigmoid per label instead of a softmax over the labels
     */
    ClassifierHead(ChunkReduction reduction, String output, boolean multiLabel) {
        this.reduction = reduction;
        this.output = output;
        this.multiLabel = multiLabel;
    }

    /** Reads {@code logits}, softmax. */
    ClassifierHead(ChunkReduction reduction) {
        this(reduction, ModelKind.TEXT_CLASSIFICATION.defaultOutput(), false);
    }

    @Override
    public String output() {
        return output;
    }

    @Override
    public List<Classification> rows(NDList outputs, long[][] masks) {
        NDArray logits = TextHead.named(outputs, output);
        Shape shape = logits.getShape();
        int rows = masks.length;
        if (shape.dimension() != 2 || shape.get(0) != rows) {
            throw new IllegalStateException("expected output '" + output + "' to hold logits [" + rows + ", labels],"
                    + " got " + shape);
        }
        int labels = (int) shape.get(1);
        float[] all = logits.toFloatArray();
        List<Classification> classifications = new ArrayList<>(rows);
        for (int r = 0; r < rows; r++) {
            float[] row = Arrays.copyOfRange(all, r * labels, (r + 1) * labels);
            classifications.add(Classification.of(multiLabel ? sigmoid(row) : softmax(all, r * labels, labels),
                    TextHead.tokens(masks[r]), row));
        }
        return classifications;
    }

    /** The reduction's scores of the windows' probabilities; tokens are those of all windows. */
    @Override
    public Classification combine(List<Classification> windows) {
        List<float[]> scores = new ArrayList<>(windows.size());
        List<float[]> logits = new ArrayList<>(windows.size());
        int tokens = 0;
        for (Classification window : windows) {
            scores.add(window.scores());
            logits.add(window.logits());
            tokens += window.tokens();
        }
        return Classification.of(multiLabel ? reduction.reduceEach(scores) : reduction.reduce(scores), tokens,
                reduction.reduceEach(logits));
    }

    @Override
    public double difference(Classification a, Classification b) {
        return TextHead.maxDifference(a.scores(), b.scores());
    }

    /** Each logit's sigmoid, in double precision. */
    static float[] sigmoid(float[] logits) {
        float[] scores = new float[logits.length];
        for (int l = 0; l < logits.length; l++) {
            scores[l] = (float) (1 / (1 + Math.exp(-(double) logits[l])));
        }
        return scores;
    }

    /** The softmax of {@code logits[offset, offset + length)}. */
    static float[] softmax(float[] logits, int offset, int length) {
        double max = Double.NEGATIVE_INFINITY;
        for (int l = 0; l < length; l++) {
            max = Math.max(max, logits[offset + l]);
        }
        double[] exp = new double[length];
        double sum = 0;
        for (int l = 0; l < length; l++) {
            exp[l] = Math.exp(logits[offset + l] - max);
            sum += exp[l];
        }
        float[] scores = new float[length];
        for (int l = 0; l < length; l++) {
            scores[l] = (float) (exp[l] / sum);
        }
        return scores;
    }
}
