package dev.serval.model;

import java.util.Objects;

/**
 * One text's sentence embedding.
 *
 * @param vector the L2-normalised embedding; owned by this record, never modified after creation
 * @param tokens how many tokens the model consumed for this text, special tokens included, after truncation
 */
public record Embedding(float[] vector, int tokens) {

    public Embedding {
        Objects.requireNonNull(vector, "vector");
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must be >= 0, was " + tokens);
        }
    }
}
