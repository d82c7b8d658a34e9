package dev.serval.api.http;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;

/**
 * A lingering close (as nginx's {@code lingering_close}) of an HTTP/1.x connection whose answer, already written,
 * says {@code Connection: close} while its request's body is still coming: the rest of the body is read and
 * dropped, and the connection is closed once the body has ended, or once the client has sent nothing for
 * {@link #LINGER_NANOS}, or at the latest {@code serval.http.body-timeout} after the answer. Closing at once would
 * reset the connection under a client still writing its body (as most client libraries do before they read), which
 * would then see a broken pipe instead of the answer; waiting for the client to give up would let a client that
 * declared a body and sent none hold the connection. {@code close()} writes what is pending first. Event loop only.
 */
final class LingeringClose extends RequestDeadlines.Deadline {

    /** How long the connection waits for more of its request's body. */
    private static final long LINGER_NANOS = 1_000_000_000L;

    private final HttpServerRequest http;
    private final Vertx vertx;
    private final long until;
    private long lastByte = System.nanoTime();
    private RequestDeadlines wheel;

    LingeringClose(HttpServerRequest http, Vertx vertx, long bodyTimeoutNanos) {
        this.http = http;
        this.vertx = vertx;
        this.until = lastByte + bodyTimeoutNanos;
    }

    void start() {
        if (http.isEnded() || http.connection() == null) {
            close();
            return;
        }
        wheel = RequestDeadlines.onThisLoop(vertx);
        http.handler(ignored -> lastByte = System.nanoTime());
        http.endHandler(ignored -> {
            wheel.disarm(this);
            close();
        });
        wheel.arm(this, LINGER_NANOS / 1_000_000);
    }

    @Override
    protected void expire() {
        long now = System.nanoTime();
        long due = Math.min(lastByte + LINGER_NANOS, until);
        if (now - due < 0) {
            wheel.arm(this, Math.ceilDiv(due - now, 1_000_000L));
            return;
        }
        close();
    }

    private void close() {
        if (http.connection() != null) {
            http.connection().close();
        }
    }
}
