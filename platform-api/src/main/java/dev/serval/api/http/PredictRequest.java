package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoded text-classification request in TEI's {@code /predict} shape ({@code inputs}: a string, or a batch of
 * one-string arrays; {@code raw_scores}; {@code truncate}) or in the shape {@code huggingface_hub}'s
 * {@code InferenceClient.text_classification} posts to a deployment's TEI URL ({@code inputs}: a string;
 * {@code parameters}: {@code top_k}, {@code function_to_apply}). A pair of strings (TEI's cross-encoder input to a
 * classifier) is refused: pairs are scored by a text-rerank deployment.
 *
 * @param texts    the texts, in order
 * @param batch    whether the client sent a batch (the answer is then a list per text)
 * @param scores   which scores to answer: the model's own, or computed from its logits
 * @param topK     how many labels per text, best first (all when the client set none)
 * @param nested   whether every answer is a list per text, as the Hugging Face Inference API shape has it
 */
record PredictRequest(List<String> texts, boolean batch, Scores scores, int topK, boolean nested) {

    /** Which scores the labels carry. */
    enum Scores {
        /** The model's: softmax, or each label's sigmoid for a multi-label model (its config.json says). */
        MODEL,
        /** The logits ({@code raw_scores: true}, {@code function_to_apply: none}). */
        LOGITS,
        SOFTMAX,
        SIGMOID
    }

    /** Reads TEI's {@code /predict} body. */
    static PredictRequest tei(JsonNode body, int maxTexts) {
        JsonNode inputs = body.get("inputs");
        Scores scores = Json.bool(body, "raw_scores", false) ? Scores.LOGITS : Scores.MODEL;
        if (inputs != null && inputs.isTextual()) {
            return new PredictRequest(List.of(text(inputs, "inputs")), false, scores, Integer.MAX_VALUE, false);
        }
        if (inputs == null || !inputs.isArray() || inputs.isEmpty()) {
            throw new InvalidInput("inputs", "'inputs' must be a string or a non-empty array of one-string arrays, not "
                    + (inputs == null ? "missing" : Json.describe(inputs)));
        }
        if (inputs.get(0).isTextual()) {
            throw new InvalidInput("inputs", "'inputs' is a pair of strings: a text-classification model scores single "
                    + "texts; score pairs with a text-rerank deployment (/rerank)");
        }
        if (inputs.size() > maxTexts) {
            throw new ApiError(413, "'inputs' holds " + inputs.size() + " texts; at most " + maxTexts
                    + " are allowed per request (serval.http.max-texts-per-request)");
        }
        List<String> texts = new ArrayList<>(inputs.size());
        for (int i = 0; i < inputs.size(); i++) {
            JsonNode element = inputs.get(i);
            if (!element.isArray() || element.size() != 1) {
                throw new InvalidInput("inputs", "'inputs[" + i + "]' must be an array of one string (a pair is "
                        + "scored by a text-rerank deployment), not " + Json.describe(element));
            }
            texts.add(text(element.get(0), "inputs[" + i + "][0]"));
        }
        return new PredictRequest(texts, true, scores, Integer.MAX_VALUE, false);
    }

    /** Reads what {@code InferenceClient.text_classification} posts: {@code {"inputs", "parameters"}}. */
    static PredictRequest hub(JsonNode body) {
        String text = text(body.get("inputs"), "inputs");
        JsonNode parameters = body.path("parameters");
        Scores scores = Scores.MODEL;
        JsonNode function = parameters.get("function_to_apply");
        if (function != null && !function.isNull()) {
            scores = switch (function.asText()) {
                case "softmax" -> Scores.SOFTMAX;
                case "sigmoid" -> Scores.SIGMOID;
                case "none" -> Scores.LOGITS;
                default -> throw new InvalidInput("parameters.function_to_apply", "'parameters.function_to_apply' must "
                        + "be 'softmax', 'sigmoid' or 'none', not " + function);
            };
        }
        int topK = Integer.MAX_VALUE;
        JsonNode k = parameters.get("top_k");
        if (k != null && !k.isNull()) {
            if (!k.isIntegralNumber() || !k.canConvertToInt() || k.asInt() < 1) {
                throw new InvalidInput("parameters.top_k", "'parameters.top_k' must be a positive integer, not " + k);
            }
            topK = k.asInt();
        }
        return new PredictRequest(List.of(text), false, scores, topK, true);
    }

    private static String text(JsonNode node, String field) {
        if (node == null || !node.isTextual() || node.textValue().isEmpty()) {
            throw new InvalidInput(field, "'" + field + "' must be a non-empty string, not "
                    + (node == null ? "missing" : Json.describe(node)));
        }
        return node.textValue();
    }
}
