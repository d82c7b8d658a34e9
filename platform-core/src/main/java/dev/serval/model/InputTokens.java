package dev.serval.model;

/**
 * One input as its text model tokenised it, and how many tokens the model reads of it: made by
 * {@link Predictor#tokens} on a predictor thread when a token budget needs the count before the input's inference, and
 * handed back to that predictor's inference of the same input, so that the input is tokenised once. What it holds
 * besides the count is the model's own. Immutable.
 */
public interface InputTokens {

    /** Tokens the model reads of the input: special tokens included; every window's, for a text split into windows. */
    int count();
}
