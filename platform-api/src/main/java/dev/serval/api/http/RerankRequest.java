package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoded rerank request: one query, the documents to score against it, and how to answer. Two dialects read into
 * it: Jina's and Cohere's ({@code POST /v1/rerank}, {@code /v2/rerank}: {@code model}, {@code query},
 * {@code documents} as strings or objects with {@code text}, {@code top_n}, {@code return_documents}) and Hugging Face
 * TEI's ({@code POST /rerank}: {@code query}, {@code texts}, {@code raw_scores}, {@code return_text},
 * {@code truncate}). Every count is checked against {@code serval.http.max-texts-per-request} before a list is made;
 * the model's own {@code max_documents_per_request} is checked by the deployment.
 *
 * @param model           the deployment (Jina/Cohere), or null (TEI: the path names it)
 * @param query           the query
 * @param documents       the documents, in the client's order
 * @param topN            how many results to answer, best first (all when the client set none)
 * @param returnDocuments whether each result carries its document's text
 * @param rawScores       whether scores are the model's logits rather than their sigmoid (TEI's {@code raw_scores})
 */
record RerankRequest(String model, String query, List<String> documents, int topN, boolean returnDocuments,
        boolean rawScores) {

    /**
     * Reads a Jina or Cohere request. {@code return_documents} defaults to true on {@code /v1/rerank} (Jina's default;
     * Cohere's v1 clients ignore the extra field) and false on {@code /v2/rerank} (Cohere v2 has no such field).
     */
    static RerankRequest cohere(JsonNode body, int maxTexts, boolean returnDocumentsByDefault) {
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            throw new InvalidInput("model", "'model' is required: the deployment of a text-rerank model");
        }
        if (!model.isTextual() || model.textValue().isEmpty()) {
            throw new InvalidInput("model", "'model' must be a non-empty string, not " + Json.describe(model));
        }
        String query = query(body.get("query"));
        List<String> documents = documents(body.get("documents"), "documents", maxTexts);
        int topN = topN(body.get("top_n"), documents.size());
        boolean returnDocuments = Json.bool(body, "return_documents", returnDocumentsByDefault);
        return new RerankRequest(model.textValue(), query, documents, topN, returnDocuments, false);
    }

    /** Reads a TEI request ({@code /rerank}); the deployment is the path's. */
    static RerankRequest tei(JsonNode body, int maxTexts) {
        String query = query(body.get("query"));
        List<String> texts = documents(body.get("texts"), "texts", maxTexts);
        JsonNode direction = body.get("truncation_direction");
        if (direction != null && direction.isTextual() && direction.textValue().equalsIgnoreCase("left")) {
            throw new InvalidInput("truncation_direction", "'truncation_direction': 'left' is not supported: Serval "
                    + "truncates a pair's longer side at its end");
        }
        Json.bool(body, "truncate", false); // accepted: a pair longer than the model takes is always truncated
        return new RerankRequest(null, query, texts, texts.size(), Json.bool(body, "return_text", false),
                Json.bool(body, "raw_scores", false));
    }

    private static String query(JsonNode query) {
        if (query == null || query.isNull()) {
            throw new InvalidInput("query", "'query' is required: a non-empty string");
        }
        if (!query.isTextual() || query.textValue().isEmpty()) {
            throw new InvalidInput("query", "'query' must be a non-empty string, not " + Json.describe(query));
        }
        return query.textValue();
    }

    private static List<String> documents(JsonNode array, String field, int maxTexts) {
        if (array == null || array.isNull()) {
            throw new InvalidInput(field, "'" + field + "' is required: an array of strings");
        }
        if (!array.isArray()) {
            throw new InvalidInput(field, "'" + field + "' must be an array, not " + Json.describe(array));
        }
        if (array.isEmpty()) {
            throw new InvalidInput(field, "'" + field + "' is an empty array; send at least one document");
        }
        if (array.size() > maxTexts) {
            throw new InvalidInput(field, "'" + field + "' holds " + array.size() + " documents; at most " + maxTexts
                    + " are allowed per request (serval.http.max-texts-per-request)");
        }
        List<String> documents = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonNode element = array.get(i);
            JsonNode text = element.isObject() ? element.get("text") : element;
            if (text == null || !text.isTextual()) {
                throw new InvalidInput(field, "'" + field + "[" + i + "]' must be a string or an object with a string "
                        + "'text', not " + Json.describe(element));
            }
            documents.add(text.textValue());
        }
        return documents;
    }

    private static int topN(JsonNode topN, int documents) {
        if (topN == null || topN.isNull()) {
            return documents;
        }
        if (!topN.isIntegralNumber() || !topN.canConvertToInt() || topN.asInt() < 1) {
            throw new InvalidInput("top_n", "'top_n' must be a positive integer, not " + topN);
        }
        return Math.min(topN.asInt(), documents);
    }
}
