package dev.serval.model;

import java.util.Objects;

/**
 * One text's classification.
 *
 * @param scores     the probability of each label, in the order of the model's labels, summing to 1 (softmax of the
 *                   logits; for a long text split into windows, see {@link ChunkReduction}); owned by this record,
 *                   never modified after creation
 * @param labelIndex the index of the largest score (the first of equal ones)
 * @param tokens     how many tokens the model consumed for this text, special tokens included, after truncation (all
 *                   windows' tokens when the text was split)
 */
public record Classification(float[] scores, int labelIndex, int tokens) {

    public Classification {
        Objects.requireNonNull(scores, "scores");
        if (labelIndex < 0 || labelIndex >= scores.length) {
            throw new IllegalArgumentException("labelIndex " + labelIndex + " is outside the " + scores.length + " scores");
        }
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must be >= 0, was " + tokens);
        }
    }

    /** The classification of {@code scores}: its label is the index of the largest score. */
    public static Classification of(float[] scores, int tokens) {
        int best = 0;
        for (int l = 1; l < scores.length; l++) {
            if (scores[l] > scores[best]) {
                best = l;
            }
        }
        return new Classification(scores, best, tokens);
    }
}
