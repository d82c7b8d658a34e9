package dev.serval.api.serving;

/**
 * How a request ended, as the {@code outcome} tag of request metrics. Which failure is which outcome is the error
 * table's to say (the edge's {@code ErrorResponses.outcome}), beside the status it answers.
 */
public enum Outcome {
    OK("ok"),
    BAD_REQUEST("bad_request"),
    REJECTED("rejected"),
    NOT_READY("not_ready"),
    /** The client went away before its answer was ready. */
    CANCELLED("cancelled"),
    /** The request's deadline passed before its answer was ready (504). */
    EXPIRED("expired"),
    ERROR("error");

    private final String tag;

    Outcome(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }
}
