package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;

/**
 * The durations a setting may take, inclusive, and the snake_case key it is known by. The spec records check their
 * components against these; the config parser reads the same ranges (quoting the text it was given), so that each
 * bound is written once.
 */
public record DurationRange(String field, Duration min, Duration max) {

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
}
