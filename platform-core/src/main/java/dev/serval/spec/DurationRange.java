package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The durations a setting may take, inclusive, and the snake_case key it is known by. The spec records check their
 * components against these; the config parser reads the same ranges (quoting the text it was given), so that each
 * bound is written once.
 */
public record DurationRange(String field, Duration min, Duration max) {

    /** Microseconds, which the config syntax adds: at most 9 digits, so the nanoseconds fit a long. */
    private static final Pattern MICROSECONDS = Pattern.compile("[0-9]{1,9}us");

    public DurationRange {
        Objects.requireNonNull(field, "field");
        if (min.compareTo(max) > 0) {
            throw new IllegalArgumentException(field + ": min " + min + " > max " + max);
        }
    }

    public boolean contains(Duration value) {
        return value != null && value.compareTo(min) >= 0 && value.compareTo(max) <= 0;
    }

    /** The range as a problem: {@code must be between 10ms and 86400s}. */
    public String bounds() {
        return "must be between " + text(min) + " and " + text(max);
    }

    /**
     * {@code value}, when in range.
     *
     * @throws InvalidSpec naming the field and the range otherwise
     */
    public Duration check(Duration value) {
        if (value == null) {
            throw new InvalidSpec(field, "is required");
        }
        if (!contains(value)) {
            throw new InvalidSpec(field, bounds() + ", not " + text(value));
        }
        return value;
    }

    /**
     * A duration as the config file writes it: {@code 400us}, {@code 2ms}, {@code 30s}; ISO-8601 when finer than a
     * microsecond.
     */
    public static String text(Duration duration) {
        long millis = duration.toMillis();
        if (Duration.ofMillis(millis).equals(duration)) {
            return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
        }
        if (duration.getNano() % 1000 == 0 && duration.getSeconds() < 1000) {
            return duration.toNanos() / 1000 + "us";
        }
        return duration.toString();
    }

    /**
     * The duration {@code text} writes, the inverse of {@link #text}: {@code 400us}, or what Quarkus's
     * {@code DurationConverter} reads for the server's own settings: a whole number of seconds ({@code 30}), a whole
     * number with a unit {@code ms s m h d} in either case ({@code 2ms}, {@code 1m}), a decimal with a unit
     * {@code s m h d} ({@code 1.5s}), or ISO-8601 with or without its {@code PT} ({@code PT30S}, {@code 1M30S}).
     * Null for blank text.
     *
     * @throws RuntimeException when {@code text} is none of these (or overflows)
     */
    public static Duration parse(String text) {
        String value = text.trim();
        int length = value.length();
        if (length == 0) {
            return null;
        }
        if (MICROSECONDS.matcher(value).matches()) {
            return Duration.ofNanos(Long.parseLong(value, 0, length - 2, 10) * 1000);
        }
        if (isWhole(value)) {
            return Duration.ofSeconds(Long.parseLong(value));
        }
        char unit = Character.toLowerCase(value.charAt(length - 1));
        String number = value.substring(0, length - 1);
        if (isWhole(number)) {
            long amount = Long.parseLong(number);
            switch (unit) {
                case 's' -> {
                    return Duration.ofSeconds(amount);
                }
                case 'm' -> {
                    return Duration.ofMinutes(amount);
                }
                case 'h' -> {
                    return Duration.ofHours(amount);
                }
                case 'd' -> {
                    return Duration.ofDays(amount);
                }
                default -> {
                }
            }
        }
        if (length > 2 && unit == 's' && Character.toLowerCase(value.charAt(length - 2)) == 'm'
                && isWhole(value.substring(0, length - 2))) {
            return Duration.ofMillis(Long.parseLong(value.substring(0, length - 2)));
        }
        if (isDecimal(number) && (unit == 'h' || unit == 'm' || unit == 's')) {
            return Duration.parse("PT" + value);
        }
        if (isDecimal(number) && unit == 'd') {
            return Duration.parse("P" + value);
        }
        char first = value.charAt(0);
        boolean digits = first >= '0' && first <= '9'
                || (first == '-' || first == '+') && (length == 1 || value.charAt(1) != 'P');
        return Duration.parse(digits ? "PT" + value : value);
    }

    /** Digits after an optional sign. */
    private static boolean isWhole(String text) {
        int start = !text.isEmpty() && (text.charAt(0) == '-' || text.charAt(0) == '+') ? 1 : 0;
        if (start == text.length()) {
            return false;
        }
        for (int i = start; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Digits and exactly one '.' after an optional sign. */
    private static boolean isDecimal(String text) {
        boolean dot = false;
        for (int i = !text.isEmpty() && (text.charAt(0) == '-' || text.charAt(0) == '+') ? 1 : 0; i < text.length();
                i++) {
            char c = text.charAt(i);
            if (c == '.') {
                if (dot) {
                    return false;
                }
                dot = true;
            } else if (c < '0' || c > '9') {
                return false;
            }
        }
        return dot;
    }
}
