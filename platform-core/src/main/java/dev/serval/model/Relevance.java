package dev.serval.model;

/**
 * How relevant one document is to its query, as a cross-encoder scores the pair ({@link ModelKind#TEXT_RERANK}).
 *
 * @param logit  the model's one logit for the pair: the raw score (TEI's {@code raw_scores: true})
 * @param score  the sigmoid of the logit, in [0, 1]: what sentence-transformers' {@code CrossEncoder} returns for a
 *               one-label model, and the {@code relevance_score} of the Cohere and Jina rerank APIs
 * @param tokens how many tokens the model read for the pair, special tokens included, after truncation
 */
public record Relevance(float logit, float score, int tokens) {

    public Relevance {
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must be >= 0, was " + tokens);
        }
    }

    /** The relevance of a pair whose logit is {@code logit}: its sigmoid, computed in double precision. */
    public static Relevance of(float logit, int tokens) {
        return new Relevance(logit, (float) (1 / (1 + Math.exp(-(double) logit))), tokens);
    }
}
