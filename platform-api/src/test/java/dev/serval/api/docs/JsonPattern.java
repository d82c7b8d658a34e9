package dev.serval.api.docs;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JSON a documented example shows after {@code # ->}, as a pattern an answer must match (docs/testing.md):
 * JSON, plus elisions written {@code ...}.
 * <ul>
 *   <li>An object matches an object with exactly its members, each matching; a member {@code ...}, anywhere among
 *       them, allows any others ({@code {...}} is any object). Members match by name, in any order.</li>
 *   <li>An array matches an array of exactly its elements; a last element {@code ...} allows any further ones
 *       ({@code [...]} is any array), and {@code ...N words...} (for example {@code ...384 floats...}) says the array
 *       holds N elements in all.</li>
 *   <li>The string {@code "..."} is any string; a string ending in {@code ...} is any string that starts with what
 *       comes before.</li>
 *   <li>A number matches a number within 1e-5 of it, or within 1e-5 of its size when larger than 1 (the last digits
 *       of a float differ between CPUs); {@code true}, {@code false} and {@code null} match themselves.</li>
 * </ul>
 */
sealed interface JsonPattern {

    /**
     * Why {@code actual} does not match, naming the place ({@code $.outputs[0].shape[1]}), or empty when it does.
     */
    Optional<String> mismatch(JsonNode actual, String path);

    /** Parses a pattern, refusing text that is not one, saying where. */
    static JsonPattern parse(String text) {
        Parser parser = new Parser(text);
        JsonPattern pattern = parser.value();
        parser.skipSpace();
        if (parser.at < text.length()) {
            throw parser.error("text after the JSON");
        }
        return pattern;
    }

    /**
     * The length of the pattern at the start of {@code text} (a JSON value, its brackets balanced outside strings), or
     * -1 when it is not complete there: how an expectation tells its JSON from the prose after it, and whether the
     * next comment line continues it.
     */
    static int extent(String text) {
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                if (depth == 0) {
                    return i + 1;
                }
            }
        }
        return -1;
    }

    /** An object: these members, and any others when {@code open}. */
    record ObjectPattern(Map<String, JsonPattern> members, boolean open) implements JsonPattern {
        public ObjectPattern {
            members = Collections.unmodifiableMap(new LinkedHashMap<>(members));
        }

        @Override
        public Optional<String> mismatch(JsonNode actual, String path) {
            if (!actual.isObject()) {
                return Optional.of(path + ": expected an object, got " + brief(actual));
            }
            // the order of members is the document's, so that the first mismatch reported is the first one written
            for (Map.Entry<String, JsonPattern> member : members.entrySet()) {
                JsonNode value = actual.get(member.getKey());
                if (value == null) {
                    return Optional.of(path + ": no member '" + member.getKey() + "' in " + brief(actual));
                }
                Optional<String> mismatch = member.getValue().mismatch(value, path + "." + member.getKey());
                if (mismatch.isPresent()) {
                    return mismatch;
                }
            }
            if (!open) {
                for (Iterator<String> names = actual.fieldNames(); names.hasNext(); ) {
                    String name = names.next();
                    if (!members.containsKey(name)) {
                        return Optional.of(path + ": member '" + name + "' is not documented (end the object with "
                                + "... if the example shows only some members)");
                    }
                }
            }
            return Optional.empty();
        }
    }

    /** An array: these elements first, then nothing more; or, when {@code open}, any more ({@code total} in all when given). */
    record ArrayPattern(List<JsonPattern> elements, boolean open, OptionalInt total) implements JsonPattern {
        public ArrayPattern {
            elements = List.copyOf(elements);
            Objects.requireNonNull(total);
            if (total.isPresent() && (!open || total.getAsInt() < elements.size())) {
                throw new IllegalArgumentException("a total of " + total.getAsInt() + " for " + elements.size()
                        + " elements shown");
            }
        }

        @Override
        public Optional<String> mismatch(JsonNode actual, String path) {
            if (!actual.isArray()) {
                return Optional.of(path + ": expected an array, got " + brief(actual));
            }
            if (actual.size() < elements.size() || (!open && actual.size() != elements.size())) {
                return Optional.of(path + ": expected " + elements.size() + (open ? " or more" : "")
                        + " elements, got " + actual.size());
            }
            if (total.isPresent() && actual.size() != total.getAsInt()) {
                return Optional.of(path + ": expected " + total.getAsInt() + " elements in all, got " + actual.size());
            }
            for (int i = 0; i < elements.size(); i++) {
                Optional<String> mismatch = elements.get(i).mismatch(actual.get(i), path + "[" + i + "]");
                if (mismatch.isPresent()) {
                    return mismatch;
                }
            }
            return Optional.empty();
        }
    }

    /** A string: exactly {@code text}, or any string starting with {@code text} when {@code prefix}. */
    record StringPattern(String text, boolean prefix) implements JsonPattern {
        public StringPattern {
            Objects.requireNonNull(text);
        }

        @Override
        public Optional<String> mismatch(JsonNode actual, String path) {
            if (!actual.isTextual()) {
                return Optional.of(path + ": expected a string, got " + brief(actual));
            }
            boolean matches = prefix ? actual.textValue().startsWith(text) : actual.textValue().equals(text);
            return matches ? Optional.empty()
                    : Optional.of(path + ": expected \"" + text + (prefix ? "...\"" : "\"") + ", got " + brief(actual));
        }
    }

    /** A number, matched within {@link #TOLERANCE} (relative above 1). */
    record NumberPattern(BigDecimal value) implements JsonPattern {
        static final double TOLERANCE = 1e-5;

        public NumberPattern {
            Objects.requireNonNull(value);
        }

        @Override
        public Optional<String> mismatch(JsonNode actual, String path) {
            if (!actual.isNumber()) {
                return Optional.of(path + ": expected " + value + ", got " + brief(actual));
            }
            double expected = value.doubleValue();
            double difference = Math.abs(actual.doubleValue() - expected);
            return difference <= TOLERANCE * Math.max(1, Math.abs(expected)) ? Optional.empty()
                    : Optional.of(path + ": expected " + value + ", got " + actual);
        }
    }

    /** {@code true}, {@code false} or {@code null}. */
    record LiteralPattern(String literal) implements JsonPattern {
        public LiteralPattern {
            if (!List.of("true", "false", "null").contains(literal)) {
                throw new IllegalArgumentException("not a JSON literal: " + literal);
            }
        }

        @Override
        public Optional<String> mismatch(JsonNode actual, String path) {
            boolean matches = switch (literal) {
                case "true" -> actual.isBoolean() && actual.booleanValue();
                case "false" -> actual.isBoolean() && !actual.booleanValue();
                default -> actual.isNull();
            };
            return matches ? Optional.empty() : Optional.of(path + ": expected " + literal + ", got " + brief(actual));
        }
    }

    /** The answer's node, cut short for a message. */
    private static String brief(JsonNode node) {
        String text = node.toString();
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    /** A recursive-descent parser of JSON with elisions; positions in errors are 1-based columns. */
    final class Parser {
        /** {@code ...}, or {@code ...words...} whose words may start with a count. */
        private static final Pattern ELISION = Pattern.compile("\\.\\.\\.(?:([^.,\\[\\]{}\"]*)\\.\\.\\.)?");
        private static final Pattern COUNT = Pattern.compile("\\s*(\\d+)\\b.*");
        private static final Pattern NUMBER = Pattern.compile("-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?");

        private final String text;
        private int at;

        private Parser(String text) {
            this.text = text;
        }

        JsonPattern value() {
            skipSpace();
            if (at >= text.length()) {
                throw error("a value is missing");
            }
            char c = text.charAt(at);
            if (c == '{') {
                return object();
            }
            if (c == '[') {
                return array();
            }
            if (c == '"') {
                String string = string();
                return string.endsWith("...") ? new StringPattern(string.substring(0, string.length() - 3), true)
                        : new StringPattern(string, false);
            }
            for (String literal : List.of("true", "false", "null")) {
                if (text.startsWith(literal, at)) {
                    at += literal.length();
                    return new LiteralPattern(literal);
                }
            }
            Matcher number = NUMBER.matcher(text).region(at, text.length());
            if (number.lookingAt()) {
                at = number.end();
                return new NumberPattern(new BigDecimal(number.group()));
            }
            throw error("not a JSON value");
        }

        private JsonPattern object() {
            at++;
            Map<String, JsonPattern> members = new LinkedHashMap<>();
            boolean open = false;
            skipSpace();
            if (peek('}')) {
                at++;
                return new ObjectPattern(members, false);
            }
            while (true) {
                skipSpace();
                if (elision().isPresent()) {
                    open = true;
                } else {
                    if (!peek('"')) {
                        throw error("a member name is missing");
                    }
                    String name = string();
                    skipSpace();
                    expect(':', "':' after a member name");
                    if (members.put(name, value()) != null) {
                        throw error("member '" + name + "' twice");
                    }
                }
                skipSpace();
                if (peek('}')) {
                    at++;
                    return new ObjectPattern(members, open);
                }
                expect(',', "',' or '}' after a member");
            }
        }

        private JsonPattern array() {
            at++;
            List<JsonPattern> elements = new ArrayList<>();
            while (true) {
                skipSpace();
                if (peek(']') && elements.isEmpty()) {
                    at++;
                    return new ArrayPattern(elements, false, OptionalInt.empty());
                }
                Optional<String> elision = elision();
                if (elision.isPresent()) {
                    skipSpace();
                    expect(']', "... must be an array's last element");
                    Matcher count = COUNT.matcher(elision.get());
                    return new ArrayPattern(elements, true, count.matches()
                            ? OptionalInt.of(Integer.parseInt(count.group(1))) : OptionalInt.empty());
                }
                elements.add(value());
                skipSpace();
                if (peek(']')) {
                    at++;
                    return new ArrayPattern(elements, false, OptionalInt.empty());
                }
                expect(',', "',' or ']' after an element");
            }
        }

        /** Reads an elision here, giving its words ("" for a bare {@code ...}), or nothing when there is none. */
        private Optional<String> elision() {
            Matcher elision = ELISION.matcher(text).region(at, text.length());
            if (!elision.lookingAt()) {
                return Optional.empty();
            }
            at = elision.end();
            return Optional.of(elision.group(1) == null ? "" : elision.group(1));
        }

        private String string() {
            StringBuilder string = new StringBuilder();
            at++;
            while (at < text.length()) {
                char c = text.charAt(at++);
                if (c == '"') {
                    return string.toString();
                }
                if (c == '\\') {
                    if (at >= text.length()) {
                        break;
                    }
                    char escaped = text.charAt(at++);
                    switch (escaped) {
                        case 'n' -> string.append('\n');
                        case 't' -> string.append('\t');
                        case 'u' -> {
                            if (at + 4 > text.length()) {
                                throw error("a \\u escape is cut short");
                            }
                            string.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                            at += 4;
                        }
                        default -> string.append(escaped);
                    }
                } else {
                    string.append(c);
                }
            }
            throw error("a string is not closed");
        }

        void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        private boolean peek(char c) {
            return at < text.length() && text.charAt(at) == c;
        }

        private void expect(char c, String what) {
            if (!peek(c)) {
                throw error(what);
            }
            at++;
        }

        IllegalArgumentException error(String problem) {
            return new IllegalArgumentException(problem + " at column " + (at + 1) + " of " + text);
        }
    }
}
