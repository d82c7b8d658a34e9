package dev.serval.spi;

/**
 * Thrown by a handler when a request's tensors are not what it takes: the request is answered 400 with this message
 * (and counts as the client's error, not a failure of the replica). Any other exception is a 500 for that request.
 */
public class InvalidInputException extends RuntimeException {

    public InvalidInputException(String message) {
        super(message);
    }
}
