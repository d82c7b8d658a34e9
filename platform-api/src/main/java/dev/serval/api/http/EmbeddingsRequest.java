package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A decoded OpenAI {@code POST /v1/embeddings} request.
 *
 * @param model      the deployment name
 * @param texts      the inputs, in order
 * @param encoding   how each vector is written ({@code encoding_format})
 * @param dimensions the requested dimension, or 0 when not given
 */
record EmbeddingsRequest(String model, List<String> texts, Encoding encoding, int dimensions) {

    /**
     * The {@code encoding_format}s: JSON floats; base64 of little-endian float32 (what OpenAI clients ask for by
     * default); and the packed sign bits vector databases take, as sentence-transformers' {@code quantize_embeddings}
     * writes them: {@code ubinary}, bit {@code 7 - j % 8} of byte {@code j / 8} set when element {@code j} is positive
     * (numpy's {@code packbits}), as JSON integers 0..255; {@code binary}, the same bytes minus 128 (-128..127); and
     * one byte per dimension by the model's calibrated ranges ({@code QuantizationRanges}), {@code uint8} 0..255 and
     * {@code int8} -128..127, as JSON integers.
     */
    enum Encoding {
        FLOAT, BASE64, BINARY, UBINARY, INT8, UINT8;

        /** Whether the encoding needs the model's quantisation ranges. */
        boolean ranged() {
            return this == INT8 || this == UINT8;
        }
    }

    private static final Set<String> FIELDS = Set.of("input", "model", "encoding_format", "dimensions", "user");

    /**
     * Validates and decodes a parsed request body; every error names the field (OpenAI's {@code param}).
     *
     * @param maxTexts texts one request may hold ({@code serval.http.max-texts-per-request})
     */
    static EmbeddingsRequest from(JsonNode body, int maxTexts) {
        Json.rejectUnknownFields(body, FIELDS, "");
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            throw new InvalidInput("model", "'model' is required");
        }
        if (!model.isTextual() || model.textValue().isEmpty()) {
            throw new InvalidInput("model", "'model' must be a non-empty string, not " + model);
        }
        List<String> texts = texts(body.get("input"), maxTexts);
        Encoding encoding = switch (textOrDefault(body, "encoding_format", "float")) {
            case "float" -> Encoding.FLOAT;
            case "base64" -> Encoding.BASE64;
            case "binary" -> Encoding.BINARY;
            case "ubinary" -> Encoding.UBINARY;
            case "int8" -> Encoding.INT8;
            case "uint8" -> Encoding.UINT8;
            default -> throw new InvalidInput("encoding_format", "'encoding_format' must be 'float', 'base64', "
                    + "'int8', 'uint8', 'binary' or 'ubinary', not " + body.get("encoding_format"));
        };
        int dimensions = dimensions(body.get("dimensions"));
        JsonNode user = body.get("user");
        if (user != null && !user.isNull() && !user.isTextual()) {
            throw new InvalidInput("user", "'user' must be a string, not " + Json.describe(user));
        }
        return new EmbeddingsRequest(model.textValue(), texts, encoding, dimensions);
    }

    /** A request's {@code dimensions} (OpenAI's and TEI's): a positive integer, or 0 when not given. */
    static int dimensions(JsonNode requested) {
        if (requested == null || requested.isNull()) {
            return 0;
        }
        if (!requested.isIntegralNumber() || !requested.canConvertToInt() || requested.asInt() < 1
                || requested.asInt() > 1_000_000) {
            throw new InvalidInput("dimensions", "'dimensions' must be a positive integer, not " + requested);
        }
        return requested.asInt();
    }

    private static List<String> texts(JsonNode input, int maxTexts) {
        if (input == null || input.isNull()) {
            throw new InvalidInput("input", "'input' is required: a string or an array of strings");
        }
        if (input.isTextual()) {
            if (input.textValue().isEmpty()) {
                throw new InvalidInput("input", "'input' is an empty string");
            }
            return List.of(input.textValue());
        }
        if (!input.isArray()) {
            throw new InvalidInput("input", "'input' must be a string or an array of strings, not " + Json.describe(input));
        }
        if (input.isEmpty()) {
            throw new InvalidInput("input", "'input' is an empty array; send at least one string");
        }
        if (input.size() > maxTexts) {
            throw new InvalidInput("input", "'input' holds " + input.size() + " texts; at most " + maxTexts
                    + " are allowed per request (serval.http.max-texts-per-request)");
        }
        List<String> texts = new ArrayList<>(input.size());
        for (int i = 0; i < input.size(); i++) {
            JsonNode element = input.get(i);
            if (!element.isTextual()) {
                String hint = element.isIntegralNumber() || element.isArray()
                        ? "; token arrays are not supported, send text" : "";
                throw new InvalidInput("input", "'input[" + i + "]' is " + Json.describe(element)
                        + ", not a string" + hint);
            }
            if (element.textValue().isEmpty()) {
                throw new InvalidInput("input", "'input[" + i + "]' is an empty string");
            }
            texts.add(element.textValue());
        }
        return texts;
    }

    private static String textOrDefault(JsonNode body, String field, String fallback) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isTextual()) {
            throw new InvalidInput(field, "'" + field + "' must be a string, not " + Json.describe(value));
        }
        return value.textValue();
    }
}
