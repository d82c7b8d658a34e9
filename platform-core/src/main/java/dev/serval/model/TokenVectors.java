package dev.serval.model;

import java.util.Objects;

/**
 * One text's token embeddings as the encoder left them (its last hidden state, one vector per token the model read,
 * special tokens included, unpooled): what TEI's {@code /embed_all} answers. A read-only view into the float array of
 * the inference that made it ({@code [rows, width, dimension]}, row-major, shared by that inference's rows): making
 * it copies nothing; token {@code t}'s component {@code d} is {@code data[offset + t × dimension + d]}. Nobody writes
 * the array after the view is made.
 *
 * <p>Because it holds the whole inference's array, a view must not outlive the request that asked for it: the result
 * cache stores embeddings without it ({@link Embedding#withoutTokenVectors()}).
 *
 * @param data      the inference's output; never modified
 * @param offset    where this text's first token starts in {@code data}
 * @param tokens    how many tokens the text has, at least 1
 * @param dimension the width of one token vector, at least 1
 */
public record TokenVectors(float[] data, int offset, int tokens, int dimension) {

    public TokenVectors {
        Objects.requireNonNull(data, "data");
        if (tokens < 1 || dimension < 1 || offset < 0 || (long) tokens * dimension > data.length - (long) offset) {
            throw new IllegalArgumentException("a view of " + tokens + " tokens of " + dimension + " at " + offset
                    + " does not fit an array of " + data.length);
        }
    }

    /** Component {@code d} of token {@code token}'s vector. */
    public float get(int token, int d) {
        return data[offset + token * dimension + d];
    }

    /** Token {@code token}'s vector: a new array. */
    public float[] token(int token) {
        float[] vector = new float[dimension];
        System.arraycopy(data, offset + token * dimension, vector, 0, dimension);
        return vector;
    }

    /** How many floats the view shows: tokens × dimension. */
    public long floats() {
        return (long) tokens * dimension;
    }
}
