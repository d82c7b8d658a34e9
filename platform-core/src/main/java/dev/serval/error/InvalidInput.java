package dev.serval.error;

/** The request itself is wrong (shape, datatype, empty text, too many inputs): the caller must change it. */
public final class InvalidInput extends ServalException {

    /** The request field the problem is in (for example {@code input} or {@code inputs[0].shape}), or null. */
    private final String field;

    public InvalidInput(String message) {
        this(null, message);
    }

    public InvalidInput(String field, String message) {
        super(message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
