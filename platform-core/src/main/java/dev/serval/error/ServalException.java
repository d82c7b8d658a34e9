package dev.serval.error;

/**
 * A typed engine error. The engine throws (or completes futures with) exactly these; the HTTP edge
 * maps each subtype to one status code and body, and nowhere else decides what a failure means.
 * Messages name the offending value and are safe to show to the caller.
 */
public abstract sealed class ServalException extends RuntimeException
        permits InvalidInput, UnknownDeployment, NotReady, Overloaded, InferenceFailed, DeadlineExceeded {

    ServalException(String message) {
        super(message, null, false, false);
    }

    ServalException(String message, Throwable cause) {
        super(message, cause, false, true);
    }
}
