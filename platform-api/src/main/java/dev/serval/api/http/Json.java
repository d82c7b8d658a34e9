package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.serval.error.InvalidInput;
import java.io.IOException;
import java.util.Iterator;
import java.util.Set;

/** Strict JSON reading for request bodies: one value, no duplicate keys, errors that say where. */
final class Json {

    private final ObjectReader reader;

    Json(ObjectMapper mapper) {
        this.reader = mapper.reader()
                .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    /** The factory of the parsers this reads with (their constraints: nesting, number and string lengths). */
    JsonFactory factory() {
        return reader.getFactory();
    }

    /** Parses {@code length} bytes from {@code offset} as one JSON object. */
    JsonNode readObject(byte[] body, int offset, int length) {
        if (length == 0) {
            throw new InvalidInput("the request body is empty; expected a JSON object");
        }
        JsonNode node;
        try {
            node = reader.readTree(body, offset, length);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw new InvalidInput("malformed JSON" + where + ": " + firstClause(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new InvalidInput("unreadable request body: " + e.getMessage());
        }
        if (node == null || node.isMissingNode()) {
            throw new InvalidInput("the request body is empty; expected a JSON object");
        }
        if (!node.isObject()) {
            throw new InvalidInput("the request body must be a JSON object, not " + describe(node));
        }
        return node;
    }

    /** Jackson's message without its source-location appendix, which repeats what we already say. */
    private static String firstClause(String message) {
        if (message == null) {
            return "unreadable";
        }
        int cut = message.length();
        for (String marker : new String[] {"\n", " (start marker", " at [Source"}) {
            int at = message.indexOf(marker);
            if (at >= 0) {
                cut = Math.min(cut, at);
            }
        }
        return message.substring(0, cut);
    }

    /** Throws naming the first field of {@code node} that is not in {@code known}. */
    static void rejectUnknownFields(JsonNode node, Set<String> known, String where) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw new InvalidInput(where + name, "unknown field '" + where + name + "'; allowed: "
                        + String.join(", ", known.stream().sorted().toList()));
            }
        }
    }

    /** "a string", "an array", ... for messages. */
    /**
     * {@code body}'s boolean {@code field}, {@code fallback} when absent or null.
     *
     * @throws InvalidInput naming the field when it is not a boolean
     */
    static boolean bool(JsonNode body, String field, boolean fallback) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isBoolean()) {
            throw new InvalidInput(field, "'" + field + "' must be a boolean, not " + describe(value));
        }
        return value.booleanValue();
    }

    static String describe(JsonNode node) {
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT, POJO -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case BINARY -> "binary data";
            case MISSING -> "missing";
        };
    }
}
