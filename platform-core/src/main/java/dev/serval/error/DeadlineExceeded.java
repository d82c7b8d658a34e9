package dev.serval.error;

/** The request's deadline passed before the model answered; work not started for it is dropped. */
public final class DeadlineExceeded extends ServalException {

    public DeadlineExceeded(String message) {
        super(message);
    }
}
