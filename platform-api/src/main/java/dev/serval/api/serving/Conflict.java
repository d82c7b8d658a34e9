package dev.serval.api.serving;

/**
 * A management change refused because of the state of other deployments (409): deleting a deployment that a pipeline
 * calls, or creating one while its namesake is still shutting down. Nothing changed; the message says what to do.
 */
public final class Conflict extends RuntimeException {

    public Conflict(String message) {
        super(message, null, false, false);
    }
}
