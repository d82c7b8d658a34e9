package dev.serval.api.http;

/**
 * An error decided at the HTTP edge (media type, body size), carrying its status. Errors about the request's
 * content are the engine's {@link dev.serval.error.InvalidInput}; this type is for what only HTTP knows.
 */
public final class ApiError extends RuntimeException {

    private final int status;

    public ApiError(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
