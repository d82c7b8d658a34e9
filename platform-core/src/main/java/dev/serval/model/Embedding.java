package dev.serval.model;

import java.util.Objects;

/**
 * One text's sentence embedding, and, straight from the model, its token embeddings.
 *
 * @param vector the L2-normalised embedding; owned by this record, never modified after creation
 * @param tokens how many tokens the model consumed for this text, special tokens included, after truncation
 * @param norm   the L2 length of the vector before its normalisation (the mean-pooled token embeddings; for a text
 *               read in windows, the mean of its windows' embeddings), so that {@link #unnormalised} is
 *               {@code vector × norm}: what TEI's {@code normalize: false} answers. Finite, {@code >= 0}
 * @param tokenVectors the text's token embeddings before pooling (TEI's {@code /embed_all}), a view into the output of
 *                     the inference that made it; null when there are none: a text read in windows, a cut or
 *                     stored embedding, a model that pools inside its graph. Held only while its request is answered
 *                     ({@link TokenVectors})
 */
public record Embedding(float[] vector, int tokens, float norm, TokenVectors tokenVectors) {

    public Embedding {
        Objects.requireNonNull(vector, "vector");
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must be >= 0, was " + tokens);
        }
        if (!(norm >= 0) || Float.isInfinite(norm)) {
            throw new IllegalArgumentException("norm must be finite and >= 0, was " + norm);
        }
    }

    /** An embedding without token vectors. */
    public Embedding(float[] vector, int tokens, float norm) {
        this(vector, tokens, norm, null);
    }

    /** An embedding whose vector is also its unnormalised form (norm 1). */
    public Embedding(float[] vector, int tokens) {
        this(vector, tokens, 1f);
    }

    /** This embedding without its token vectors (what a cache keeps): this one when it has none. */
    public Embedding withoutTokenVectors() {
        return tokenVectors == null ? this : new Embedding(vector, tokens, norm);
    }

    /** The vector before its normalisation, {@code vector × norm}: a new array. */
    public float[] unnormalised() {
        float[] scaled = new float[vector.length];
        for (int i = 0; i < vector.length; i++) {
            scaled[i] = vector[i] * norm;
        }
        return scaled;
    }

    /**
     * This embedding cut to its first {@code width} components and L2-normalised again: a Matryoshka model's smaller
     * embedding (what sentence-transformers' {@code truncate_dim} gives, normalised); its unnormalised form is the
     * first {@code width} components of this one's. A new record, without token vectors; this one is kept.
     *
     * @throws IllegalArgumentException when {@code width} is not between 1 and the vector's length
     */
    public Embedding cut(int width) {
        if (width < 1 || width > vector.length) {
            throw new IllegalArgumentException("width must be 1 to " + vector.length + ", was " + width);
        }
        double sum = 0;
        for (int i = 0; i < width; i++) {
            sum += (double) vector[i] * vector[i];
        }
        float scale = sum > 0 ? (float) (1 / Math.sqrt(sum)) : 0f;
        float[] cut = new float[width];
        for (int i = 0; i < width; i++) {
            cut[i] = vector[i] * scale;
        }
        return new Embedding(cut, tokens, (float) (norm * Math.sqrt(sum)));
    }
}
