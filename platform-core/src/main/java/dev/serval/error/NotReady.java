package dev.serval.error;

/** The deployment exists but cannot serve now: still loading, failed to load, or shutting down. */
public final class NotReady extends ServalException {

    public NotReady(String message) {
        super(message);
    }
}
