package dev.serval.error;

import java.time.Duration;

/**
 * The deployment's bounded queue cannot take the request. Refused at once, before any work, with an
 * estimate of when capacity is likely to be free again (derived from the observed service time).
 */
public final class Overloaded extends ServalException {

    private final Duration retryAfter;

    public Overloaded(String message, Duration retryAfter) {
        super(message);
        this.retryAfter = retryAfter;
    }

    /**
     * When the caller may retry: the estimated time for the work ahead of it to drain, at millisecond resolution (a
     * queue that drains in milliseconds says so; the HTTP edge rounds it for {@code Retry-After} and sends it exactly
     * in {@code retry-after-ms}).
     */
    public Duration retryAfter() {
        return retryAfter;
    }
}
