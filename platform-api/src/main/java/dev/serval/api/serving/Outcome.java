package dev.serval.api.serving;

import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.error.UnknownDeployment;

/** How a request ended, as the {@code outcome} tag of request metrics. */
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

    /**
     * The outcome of a request that failed with {@code failure}. Only {@link #ERROR} feeds the failure monitor: a
     * refusal for load ({@code Overloaded}, or a 503/429 decided at the edge) is {@link #REJECTED}, whoever caused it.
     */
    public static Outcome of(Throwable failure) {
        return switch (failure) {
            case InvalidInput ignored -> BAD_REQUEST;
            case UnknownDeployment ignored -> BAD_REQUEST;
            case Overloaded ignored -> REJECTED;
            case NotReady ignored -> NOT_READY;
            case InferenceFailed ignored -> ERROR;
            case dev.serval.error.DeadlineExceeded ignored -> EXPIRED;
            case dev.serval.api.http.ApiError error -> switch (error.status()) {
                case 429, 503 -> REJECTED;
                default -> error.status() >= 500 ? ERROR : BAD_REQUEST;
            };
            default -> ERROR;
        };
    }
}
