package dev.serval.model;

import java.util.Objects;

/**
 * One input of a cross-encoder ({@link ModelKind#TEXT_RERANK}): a query and one document to score against it, read by
 * the model together as one sequence pair ({@code [CLS] query [SEP] document [SEP]}).
 *
 * @param query    the query, the pair's first sequence
 * @param document the document, the pair's second sequence
 */
public record TextPair(String query, String document) {

    public TextPair {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(document, "document");
    }

    /** Both texts' length in characters: a proxy for the pair's tokens that costs nothing to read. */
    public long length() {
        return (long) query.length() + document.length();
    }
}
