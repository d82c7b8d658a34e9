package dev.serval.spec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How a deployment setting's value is read from YAML or JSON (or a property's text), checked and written back. A
 * value it refuses is a {@link Refused} stating the problem only; {@link DeploymentFields} names the field.
 */
interface SettingKind<T> {

    /**
     * The value of {@code node}.
     *
     * @throws Refused saying what is wrong with it (the caller names the source, deployment and field)
     */
    T read(JsonNode node);

    /** The value as the config file writes it. */
    default Object write(T value) {
        return value;
    }

    /** A property's text as the YAML value it stands for, so that the file's rules read it. */
    default JsonNode fromText(String text) {
        return TextNode.valueOf(text);
    }

    SettingKind<Boolean> BOOLEAN = new SettingKind<>() {
        @Override
        public Boolean read(JsonNode node) {
            if (node == null || !node.isBoolean()) {
                throw new Refused("must be true or false, not " + node);
            }
            return node.booleanValue();
        }

        @Override
        public JsonNode fromText(String text) {
            // a property's text in any case, as SmallRye reads booleans (TRUE from an environment variable)
            String trimmed = text.trim();
            return trimmed.equalsIgnoreCase("true") || trimmed.equalsIgnoreCase("false")
                    ? BooleanNode.valueOf(Boolean.parseBoolean(trimmed)) : TextNode.valueOf(text);
        }
    };

    /** A property's text as the number it stands for, or as text (for the reader to refuse) when it is none. */
    static JsonNode number(String text) {
        try {
            return DoubleNode.valueOf(Double.parseDouble(text.trim()));
        } catch (NumberFormatException e) {
            return TextNode.valueOf(text);
        }
    }

    /**
     * A size in bytes: a whole number, or text with a unit, {@code 512Mi} or {@code 2G} (as Kubernetes writes
     * quantities: {@code k M G T} powers of 1000, {@code Ki Mi Gi Ti} powers of 1024, an optional trailing
     * {@code B}). Written back as a whole number of bytes.
     */
    SettingKind<Long> SIZE = new SettingKind<>() {
        private static final Pattern QUANTITY = Pattern.compile("(\\d{1,15})\\s*([kKMGT]i?)?B?");

        @Override
        public Long read(JsonNode node) {
            if (node != null && node.isIntegralNumber() && node.canConvertToLong() && node.longValue() >= 0) {
                return node.longValue();
            }
            Matcher matcher = node != null && node.isTextual() ? QUANTITY.matcher(node.textValue().trim()) : null;
            if (matcher == null || !matcher.matches()) {
                throw new Refused("must be a size in bytes, such as 536870912, 512Mi or 2G, not " + node);
            }
            long number = Long.parseLong(matcher.group(1));
            String unit = matcher.group(2) == null ? "" : matcher.group(2).toUpperCase(Locale.ROOT);
            long factor = switch (unit) {
                case "" -> 1L;
                case "K" -> 1_000L;
                case "KI" -> 1L << 10;
                case "M" -> 1_000_000L;
                case "MI" -> 1L << 20;
                case "G" -> 1_000_000_000L;
                case "GI" -> 1L << 30;
                case "T" -> 1_000_000_000_000L;
                default -> 1L << 40; // TI
            };
            if (number > Long.MAX_VALUE / factor) {
                throw new Refused("is too large: " + node.textValue());
            }
            return number * factor;
        }

        @Override
        public JsonNode fromText(String text) {
            try {
                return LongNode.valueOf(Long.parseLong(text.trim()));
            } catch (NumberFormatException e) {
                return TextNode.valueOf(text);
            }
        }
    };

    /** A number in (0, 1]; the range itself is the record's to check. */
    SettingKind<Double> FRACTION = new SettingKind<>() {
        @Override
        public Double read(JsonNode node) {
            if (node == null || !node.isNumber()) {
                throw new Refused("must be a number in (0, 1], not " + node);
            }
            return node.doubleValue();
        }

        @Override
        public JsonNode fromText(String text) {
            return number(text);
        }
    };

    /** A number above 0 and at most {@code max}, whole or not. */
    static SettingKind<Double> positive(double max) {
        String bounds = "must be a number above 0 and at most " + (max == Math.rint(max) ? Long.toString((long) max)
                : Double.toString(max));
        return new SettingKind<>() {
            @Override
            public Double read(JsonNode node) {
                if (node == null || !node.isNumber()) {
                    throw new Refused(bounds + ", not " + node);
                }
                double value = node.doubleValue();
                if (!(value > 0 && value <= max)) {
                    throw new Refused(bounds + ", not " + node);
                }
                return value;
            }

            @Override
            public JsonNode fromText(String text) {
                return number(text);
            }
        };
    }

    /**
     * A string. A whole number is taken as its text only when {@code numbersAsText} (an unquoted {@code version:
     * 2}); a fractional one never is, since YAML reads 1.10 as 1.1 and the text would not be what was written.
     */
    static SettingKind<String> text(boolean numbersAsText) {
        return node -> {
            if (node == null || node.isNull()) {
                throw new Refused("is required");
            }
            if (!node.isTextual() && !(node.isIntegralNumber() && numbersAsText)) {
                throw new Refused("must be a string, not " + node + (node.isNumber() ? " (write it in quotes)" : ""));
            }
            String text = node.asText();
            if (text.isBlank()) {
                throw new Refused("must not be blank");
            }
            return text;
        };
    }

    /** A whole number within {@code range}. */
    static SettingKind<Integer> whole(IntRange range) {
        return new SettingKind<>() {
            @Override
            public Integer read(JsonNode node) {
                if (node == null || !node.isIntegralNumber() || !node.canConvertToInt()) {
                    throw new Refused("must be a whole number, not " + node);
                }
                int number = node.intValue();
                if (!range.contains(number)) {
                    throw new Refused("must be between " + range.min() + " and " + range.max() + ", not " + number);
                }
                return number;
            }

            @Override
            public JsonNode fromText(String text) {
                try {
                    long number = Long.parseLong(text.trim());
                    return number == (int) number ? IntNode.valueOf((int) number) : LongNode.valueOf(number);
                } catch (NumberFormatException e) {
                    return TextNode.valueOf(text);
                }
            }
        };
    }

    /** A duration such as {@code 400us}, {@code 2ms}, {@code 30s}, {@code 1m} or {@code PT30S} within {@code range}. */
    static SettingKind<Duration> duration(DurationRange range) {
        return new SettingKind<>() {
            @Override
            public Duration read(JsonNode node) {
                if (node == null || !node.isTextual()) {
                    throw new Refused("must be a duration such as 2ms, 30s or 1m, not " + node);
                }
                Duration duration;
                try {
                    duration = DurationRange.parse(node.textValue());
                } catch (RuntimeException e) {
                    throw new Refused("'" + node.textValue() + "' is not a duration such as 2ms, 30s or 1m");
                }
                if (!range.contains(duration)) {
                    throw new Refused(range.bounds() + ", not " + node.textValue());
                }
                return duration;
            }

            @Override
            public Object write(Duration value) {
                return DurationRange.text(value);
            }
        };
    }

    /** One of an enum's constants, written in lower case. */
    static <E extends Enum<E>> SettingKind<E> choice(E[] constants) {
        List<String> names = Arrays.stream(constants).map(c -> c.name().toLowerCase(Locale.ROOT)).toList();
        return new SettingKind<>() {
            @Override
            public E read(JsonNode node) {
                int index = node != null && node.isTextual() ? names.indexOf(node.textValue()) : -1;
                if (index < 0) {
                    throw new Refused("must be one of " + String.join(", ", names) + ", not " + node);
                }
                return constants[index];
            }

            @Override
            public Object write(E value) {
                return names.get(value.ordinal());
            }

            /** A property's text in any case, as SmallRye reads enums ({@code CHUNK} from an environment variable). */
            @Override
            public JsonNode fromText(String text) {
                return TextNode.valueOf(text.trim().toLowerCase(Locale.ROOT));
            }
        };
    }

    /** A value a kind refuses; {@link DeploymentFields} turns it into an {@link InvalidSpec} naming the field. */
    final class Refused extends RuntimeException {

        Refused(String problem) {
            super(problem, null, false, false);
        }
    }
}
