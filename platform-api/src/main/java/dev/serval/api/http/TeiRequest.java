package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import java.util.ArrayList;
import java.util.List;

/**
 * A decoded Hugging Face TEI embedding request: {@code POST /embed} (and {@code POST /tei/<deployment>}, which
 * {@code huggingface_hub}'s {@code InferenceClient.feature_extraction} posts to), {@code POST /embed_all} or
 * {@code POST /similarity}.
 *
 * <p>As TEI does, fields it does not know are ignored (its clients send the parameters of other tasks). The options
 * Serval cannot honour are refused by name rather than ignored: {@code truncation_direction: left} (texts are
 * truncated at their end) and {@code prompt_name} (no model declares prompts). {@code normalize: false} answers each
 * embedding before its L2 normalisation (the mean-pooled vector, {@code Embedding.unnormalised}), at the root or
 * under {@code parameters}. {@code truncate} is accepted and changes nothing: a text longer than
 * the model takes is handled as its deployment's {@code long_inputs} says, truncated by default.
 *
 * @param texts      the texts to embed, in order; for a similarity request the source sentence first
 * @param dimensions the requested dimension, or 0 when not given
 * @param similarity whether this is a similarity request: the answer is each sentence's cosine with the first text
 * @param normalize  whether the embeddings are answered L2-normalised (TEI's default) or as pooled
 */
record TeiRequest(List<String> texts, int dimensions, boolean similarity, boolean normalize) {

    private static final String MAX_TEXTS = "serval.http.max-texts-per-request";
    private static final String MAX_EMBED_ALL_TEXTS = "serval.tei.max-embed-all-inputs";

    /** Decodes an embed request; {@code maxTexts} is {@code serval.http.max-texts-per-request}. */
    static TeiRequest embed(JsonNode body, int maxTexts) {
        boolean normalize = checkOptions(body, "");
        JsonNode parameters = body.get("parameters");
        if (parameters != null && parameters.isObject()) {
            normalize &= checkOptions(parameters, "parameters.");
        }
        return new TeiRequest(texts(body.get("inputs"), maxTexts, MAX_TEXTS),
                EmbeddingsRequest.dimensions(body.get("dimensions")), false, normalize);
    }

    /**
     * Decodes an {@code /embed_all} request: {@code inputs}, {@code truncate}, {@code truncation_direction},
     * {@code prompt_name}, as {@link #embed} reads them (TEI's {@code EmbedAllRequest} has no {@code normalize} or
     * {@code dimensions}: the token vectors are answered as the model gives them).
     *
     * @param maxTexts {@code serval.tei.max-embed-all-inputs}: each text's answer is up to {@code max_length × width}
     *                 floats, so the count is bounded far below {@link #embed}'s
     */
    static TeiRequest embedAll(JsonNode body, int maxTexts) {
        checkTruncation(body, "");
        return new TeiRequest(texts(body.get("inputs"), maxTexts, MAX_EMBED_ALL_TEXTS), 0, false, true);
    }

    /**
     * Decodes a similarity request, {@code {"inputs": {"source_sentence": "...", "sentences": [...]},
     * "parameters": {...}}}.
     */
    static TeiRequest similarity(JsonNode body, int maxTexts) {
        JsonNode inputs = body.get("inputs");
        if (inputs == null || !inputs.isObject()) {
            throw new InvalidInput("inputs", "'inputs' must be an object with 'source_sentence' and 'sentences', not "
                    + (inputs == null ? "missing" : Json.describe(inputs)));
        }
        JsonNode parameters = body.get("parameters");
        if (parameters != null && !parameters.isNull()) {
            if (!parameters.isObject()) {
                throw new InvalidInput("parameters", "'parameters' must be an object, not " + Json.describe(parameters));
            }
            checkOptions(parameters, "parameters.");
        }
        JsonNode source = inputs.get("source_sentence");
        if (source == null || !source.isTextual() || source.textValue().isEmpty()) {
            throw new InvalidInput("inputs.source_sentence", "'inputs.source_sentence' must be a non-empty string");
        }
        JsonNode sentences = inputs.get("sentences");
        if (sentences == null || !sentences.isArray()) {
            throw new InvalidInput("inputs.sentences", "'inputs.sentences' must be an array of strings");
        }
        List<String> texts = texts(sentences, maxTexts - 1, "inputs.sentences", MAX_TEXTS);
        List<String> all = new ArrayList<>(texts.size() + 1);
        all.add(source.textValue());
        all.addAll(texts);
        return new TeiRequest(all, 0, true, true);
    }

    /** Checks the options of {@code options}; returns its {@code normalize} (true unless it says false). */
    private static boolean checkOptions(JsonNode options, String where) {
        JsonNode normalize = options.get("normalize");
        if (normalize != null && !normalize.isNull() && !normalize.isBoolean()) {
            throw new InvalidInput(where + "normalize", "'" + where + "normalize' must be a boolean, not "
                    + Json.describe(normalize));
        }
        checkTruncation(options, where);
        return normalize == null || normalize.isNull() || normalize.booleanValue();
    }

    /** Checks {@code truncate}, {@code truncation_direction} and {@code prompt_name} of {@code options}. */
    private static void checkTruncation(JsonNode options, String where) {
        JsonNode truncate = options.get("truncate");
        if (truncate != null && !truncate.isNull() && !truncate.isBoolean()) {
            throw new InvalidInput(where + "truncate", "'" + where + "truncate' must be a boolean, not "
                    + Json.describe(truncate));
        }
        JsonNode direction = options.get("truncation_direction");
        if (direction != null && !direction.isNull()) {
            if (!direction.isTextual() || !(direction.textValue().equalsIgnoreCase("right")
                    || direction.textValue().equalsIgnoreCase("left"))) {
                throw new InvalidInput(where + "truncation_direction", "'" + where + "truncation_direction' must be "
                        + "'right' or 'left', not " + direction);
            }
            if (direction.textValue().equalsIgnoreCase("left")) {
                throw new InvalidInput(where + "truncation_direction", "'" + where + "truncation_direction': 'left' "
                        + "is not supported: Serval truncates a text at its end");
            }
        }
        JsonNode prompt = options.get("prompt_name");
        if (prompt != null && !prompt.isNull()) {
            throw new InvalidInput(where + "prompt_name", "'" + where + "prompt_name' is not supported: the model "
                    + "declares no prompts; prepend the prompt to the text");
        }
    }

    private static List<String> texts(JsonNode inputs, int maxTexts, String setting) {
        if (inputs == null || inputs.isNull()) {
            throw new InvalidInput("inputs", "'inputs' is required: a string or an array of strings");
        }
        if (inputs.isTextual()) {
            if (inputs.textValue().isEmpty()) {
                throw new InvalidInput("inputs", "'inputs' cannot be empty");
            }
            return List.of(inputs.textValue());
        }
        if (!inputs.isArray()) {
            throw new InvalidInput("inputs", "'inputs' must be a string or an array of strings, not "
                    + Json.describe(inputs));
        }
        return texts(inputs, maxTexts, "inputs", setting);
    }

    private static List<String> texts(JsonNode array, int maxTexts, String field, String setting) {
        if (array.isEmpty()) {
            throw new InvalidInput(field, "'" + field + "' cannot be empty");
        }
        if (array.size() > maxTexts) {
            // TEI's "batch size error", a 413.
            throw new ApiError(413, "'" + field + "' holds " + array.size() + " texts; at most " + maxTexts
                    + " are allowed per request (" + setting + ")");
        }
        List<String> texts = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            JsonNode element = array.get(i);
            if (!element.isTextual()) {
                String hint = element.isIntegralNumber() || element.isArray()
                        ? "; token ids are not supported, send text" : "";
                throw new InvalidInput(field, "'" + field + "[" + i + "]' is " + Json.describe(element)
                        + ", not a string" + hint);
            }
            if (element.textValue().isEmpty()) {
                throw new InvalidInput(field, "'" + field + "[" + i + "]' cannot be empty");
            }
            texts.add(element.textValue());
        }
        return texts;
    }
}
