package dev.serval.model;

/**
 * What a text model does with a text longer than its maximum length.
 *
 * <p>Chunking is bounded: a text may split into at most {@code maxChunks} windows. A text longer than
 * {@link #maxChars(int)} characters is refused when it is validated, before it is tokenised or queued; a shorter one
 * that still splits into more windows is refused by its predictor right after tokenising, before any window runs.
 * Both refusals are {@code InvalidInput} (HTTP 400) naming the limit.
 *
 * @param chunk         false: truncate at the maximum (sentence-transformers' behaviour, the default); true: split
 *                      into overlapping windows of the maximum length, run each, and combine them as the model kind
 *                      says (text embeddings: the mean of the window embeddings, renormalised; text classifiers: the
 *                      {@link ChunkReduction} of the windows' probabilities)
 * @param overlapTokens tokens each window shares with the previous one, when chunking
 * @param maxChunks     windows one text may split into, when chunking ({@code max_chunks_per_input}); 1 to
 *                      {@value #MAX_CHUNKS_LIMIT}, default {@value #DEFAULT_MAX_CHUNKS}
 */
public record LongInputs(boolean chunk, int overlapTokens, int maxChunks) {

    /** Windows per text unless configured: with a 256-token maximum, about 14,000 tokens (some 50 KB of English). */
    public static final int DEFAULT_MAX_CHUNKS = 64;
    /** The largest {@code maxChunks} accepted. */
    public static final int MAX_CHUNKS_LIMIT = 4096;
    /**
     * Characters per token that {@link #maxChars} allows for. Ordinary text averages 3 to 5 characters per token
     * (WordPiece or BPE), so a text refused by characters would have needed several times the allowed windows; only
     * text made of unusually long tokens (long runs without spaces) could fit its windows and still be refused.
     */
    public static final int CHARS_PER_TOKEN = 16;

    public LongInputs {
        if (overlapTokens < 0) {
            throw new IllegalArgumentException("chunk-overlap must be >= 0, was " + overlapTokens);
        }
        if (maxChunks < 1 || maxChunks > MAX_CHUNKS_LIMIT) {
            throw new IllegalArgumentException("max-chunks-per-input must be between 1 and " + MAX_CHUNKS_LIMIT
                    + ", was " + maxChunks);
        }
    }

    public static LongInputs truncate() {
        return new LongInputs(false, 0, DEFAULT_MAX_CHUNKS);
    }

    /** Chunking with at most {@value #DEFAULT_MAX_CHUNKS} windows per text. */
    public static LongInputs chunk(int overlapTokens) {
        return chunk(overlapTokens, DEFAULT_MAX_CHUNKS);
    }

    public static LongInputs chunk(int overlapTokens, int maxChunks) {
        return new LongInputs(true, overlapTokens, maxChunks);
    }

    /**
     * The longest text, in UTF-16 characters ({@link String#length()}), that chunking takes without tokenising it:
     * {@code maxChunks × maxLength × }{@value #CHARS_PER_TOKEN}.
     */
    public long maxChars(int maxLength) {
        return (long) maxChunks * maxLength * CHARS_PER_TOKEN;
    }
}
