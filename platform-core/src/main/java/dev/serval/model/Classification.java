package dev.serval.model;

import java.util.Objects;

/**
 * One text's classification.
 *
 * @param scores     each label's score, in the order of the model's labels: the softmax of the logits, summing to 1,
 *                   or for a multi-label model ({@code problem_type: multi_label_classification} in its
 *                   {@code config.json}) each logit's sigmoid; for a long text split into windows, see
 *                   {@link ChunkReduction}. Owned by this record, never modified after creation
 * @param labelIndex the index of the largest score (the first of equal ones)
 * @param tokens     how many tokens the model consumed for this text, special tokens included, after truncation (all
 *                   windows' tokens when the text was split)
 * @param logits     the raw logits the scores were made of, as many as the scores (for a chunked text, combined by the
 *                   same reduction, label by label, without renormalising); owned by this record
 */
public record Classification(float[] scores, int labelIndex, int tokens, float[] logits) {

    public Classification {
        Objects.requireNonNull(scores, "scores");
        Objects.requireNonNull(logits, "logits");
        if (labelIndex < 0 || labelIndex >= scores.length) {
            throw new IllegalArgumentException("labelIndex " + labelIndex + " is outside the " + scores.length + " scores");
        }
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must be >= 0, was " + tokens);
        }
        if (logits.length != scores.length) {
            throw new IllegalArgumentException(logits.length + " logits for " + scores.length + " scores");
        }
    }

    /** A classification known by its scores alone (a test's fake): its logits are its scores. */
    public Classification(float[] scores, int labelIndex, int tokens) {
        this(scores, labelIndex, tokens, scores);
    }

    /** The classification of {@code scores}: its label is the index of the largest score; its logits its scores. */
    public static Classification of(float[] scores, int tokens) {
        return of(scores, tokens, scores);
    }

    /** The classification of {@code scores}, made of {@code logits}: its label is the index of the largest score. */
    public static Classification of(float[] scores, int tokens, float[] logits) {
        int best = 0;
        for (int l = 1; l < scores.length; l++) {
            if (scores[l] > scores[best]) {
                best = l;
            }
        }
        return new Classification(scores, best, tokens, logits);
    }
}
