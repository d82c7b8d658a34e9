package dev.serval.cache;

import dev.serval.spec.ServedModel;
import java.util.Objects;

/**
 * What one cached result depends on: the served model (its version, loader options and session settings) and the
 * input's exact text. Equality compares both in full ({@link String#equals}): the hash only picks the bucket, so two
 * texts with one hash never share an entry. The deployment is implied (each has its own cache), and so is its kind (a
 * deployment never changes kind). Requests carry no option that changes a text model's result (embedding
 * {@code dimensions} cut the cached embedding, TEI's {@code normalize: false} reads the length it keeps, encodings are
 * the edge's), so none is part of the key. The cache holds pooled results only: an embedding is stored without its
 * token vectors, and requests for token vectors (TEI's {@code /embed_all}) neither read nor fill it, so a pooled and a
 * token answer never share an entry.
 *
 * @param model the served model that made (or would make) the result
 * @param text  the input
 */
public record ResultKey(ServedModel model, String text) {

    public ResultKey {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(text, "text");
    }
}
