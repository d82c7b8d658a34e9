package dev.serval.spec;

/**
 * The values a whole-number setting may take, inclusive, and the snake_case key it is known by. The spec records
 * check their components against these; the config parser reads the same ranges, so that each bound is written once.
 */
public record IntRange(String field, int min, int max) {

    public IntRange {
        if (min > max) {
            throw new IllegalArgumentException(field + ": min " + min + " > max " + max);
        }
    }

    public boolean contains(long value) {
        return value >= min && value <= max;
    }

    /**
     * {@code value}, when in range.
     *
     * @throws InvalidSpec naming the field and the range otherwise
     */
    public int check(int value) {
        if (!contains(value)) {
            throw new InvalidSpec(field, "must be between " + min + " and " + max + ", not " + value);
        }
        return value;
    }
}
