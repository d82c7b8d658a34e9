package dev.serval.predictor;

/**
 * What a text model does with a text longer than its maximum length.
 *
 * @param chunk         false: truncate at the maximum (sentence-transformers' behaviour, the default); true: split
 *                      into overlapping windows of the maximum length, run each, and combine them as the model kind
 *                      says (text embeddings: the mean of the window embeddings, renormalised; text classifiers: the
 *                      {@link ChunkReduction} of the windows' probabilities)
 * @param overlapTokens tokens each window shares with the previous one, when chunking
 */
public record LongInputs(boolean chunk, int overlapTokens) {

    public LongInputs {
        if (overlapTokens < 0) {
            throw new IllegalArgumentException("chunk-overlap must be >= 0, was " + overlapTokens);
        }
    }

    public static LongInputs truncate() {
        return new LongInputs(false, 0);
    }

    public static LongInputs chunk(int overlapTokens) {
        return new LongInputs(true, overlapTokens);
    }
}
