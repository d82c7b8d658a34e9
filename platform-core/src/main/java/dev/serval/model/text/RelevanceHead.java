package dev.serval.model.text;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import dev.serval.model.Relevance;
import java.util.ArrayList;
import java.util.List;

/**
 * Relevance scores from a cross-encoder: each row of the logits [batch, labels] (the graph output {@code logits}, unless
 * the model names it otherwise) is one (query, document) pair; its first logit is the raw score and its sigmoid the
 * relevance ({@link Relevance#of}); a model of more than one logit per pair fails its first inference, at load.
 * Pairs are truncated, never split into windows, so there is nothing to combine. Stateless.
 */
final class RelevanceHead implements TextHead<Relevance> {

    private final String output;

    /** @param output the graph output holding the logits */
    RelevanceHead(String output) {
        this.output = output;
    }

    @Override
    public String output() {
        return output;
    }

    /** @throws IllegalStateException when the output is not [rows, 1]: a cross-encoder gives one logit per pair */
    @Override
    public List<Relevance> rows(NDList outputs, long[][] masks) {
        int rows = masks.length;
        NDArray logits = TextHead.named(outputs, output);
        Shape shape = logits.getShape();
        if (shape.dimension() != 2 || shape.get(0) != rows) {
            throw new IllegalStateException("expected output '" + output + "' to hold logits [" + rows + ", 1], got "
                    + shape);
        }
        if (shape.get(1) != 1) {
            throw new IllegalStateException("the model gives " + shape.get(1) + " logits per pair; a text-rerank model"
                    + " gives one (num_labels 1)");
        }
        float[] all = logits.toFloatArray();
        List<Relevance> relevances = new ArrayList<>(rows);
        for (int r = 0; r < rows; r++) {
            relevances.add(Relevance.of(all[r], TextHead.tokens(masks[r])));
        }
        return relevances;
    }

    @Override
    public Relevance combine(List<Relevance> windows) {
        throw new IllegalStateException("a text-rerank model truncates its pairs; it never splits one into windows");
    }

    @Override
    public double difference(Relevance a, Relevance b) {
        return Math.abs(a.logit() - b.logit());
    }
}
