package dev.serval.error;

/** The model failed on input the engine accepted: a server-side failure, never the caller's fault. */
public final class InferenceFailed extends ServalException {

    public InferenceFailed(String message, Throwable cause) {
        super(message, cause);
    }
}
