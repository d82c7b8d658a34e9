package dev.serval.spec;

/** What a text model does with a text over its maximum length ({@code long_inputs}). */
public enum LongInputPolicy {

    /** Keep the first {@code max_length} tokens (sentence-transformers' behaviour). The default. */
    TRUNCATE,

    /** Split into overlapping windows of the maximum length, run each and combine their outputs. */
    CHUNK
}
