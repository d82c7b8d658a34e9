package dev.serval.api.http;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.HttpServerRequestInternal;
import io.vertx.core.http.impl.HttpServerRequestWrapper;
import java.util.function.BiConsumer;

/**
 * A gRPC call's request bytes count in the server's budget of request bytes held ({@code serval.http.max-buffered-bytes},
 * {@link ByteBudget}) from the moment they arrive, as a REST body's do: Vert.x's gRPC layer buffers a message until it
 * has all of it (up to {@code serval.http.max-body-size}), and many streams could each hold most of one. Each chunk is
 * taken from the budget as it arrives; the bytes of a message are given back when its last byte arrives, just before
 * the gRPC layer hands the message over (from then on the call holds the message's bytes until its answer:
 * {@code GrpcInferenceService.run}); the bytes of a message never completed are given back when the stream ends. A
 * chunk that does not fit refuses the call ({@code refuse}) and nothing more of it is read.
 *
 * <p>The framing also refuses, in the chunk where the prefix arrives, a message longer than
 * {@code serval.http.max-body-size} (the gRPC layer would answer it itself, but then also end the call a second
 * time) and a compressed message (its length says nothing of what it inflates to, and the gRPC layer would inflate
 * it whole, unbounded, before anything could look at it); and the event loop's {@link RequestDeadlines} refuse a
 * message that has not all arrived within {@code serval.http.body-timeout} of its first bytes (a stalled message would
 * otherwise hold its bytes until the stream ends). A refused call's later chunks and its end are dropped.
 *
 * <p>Messages are found by their gRPC framing ({@link GrpcFraming}). Event loop only: Vert.x calls the handlers on the
 * connection's event loop.
 */
final class GrpcBytesInTransit extends HttpServerRequestWrapper {

    /** Why a call is refused at the edge. */
    enum Refusal {
        /** Its bytes do not fit the server's budget. */
        OVER_BUDGET,
        /** A message declares more bytes than {@code serval.http.max-body-size}. */
        TOO_LARGE,
        /** A message is compressed. */
        COMPRESSED,
        /** A message did not all arrive within {@code serval.http.body-timeout} of its first bytes. */
        STALLED
    }

    private final ByteBudget budget;
    private final RequestDeadlines deadlines;
    private final long bodyTimeoutMillis;
    /** Armed on {@link #deadlines} while a message of the call is unfinished; made for the first such message. */
    private Stall stall;
    private final long maxMessageSize;
    private final BiConsumer<HttpServerRequest, Refusal> refuse;
    private final GrpcFraming framing = new GrpcFraming();
    /** Bytes of the message being received (prefix included) taken from the budget and not given back. */
    private long held;
    private boolean refused;
    private boolean ended;

    /**
     * @param deadlines      the calling event loop's deadlines, where an unfinished message waits
     * @param bodyTimeoutMillis how long a message may take to arrive from its first bytes
     * @param maxMessageSize the longest message a call may declare ({@code serval.http.max-body-size})
     * @param refuse         ends a call, for the reason given, before the gRPC layer sees the chunk that refused it
     */
    GrpcBytesInTransit(HttpServerRequest request, ByteBudget budget, RequestDeadlines deadlines,
            long bodyTimeoutMillis, long maxMessageSize, BiConsumer<HttpServerRequest, Refusal> refuse) {
        super((HttpServerRequestInternal) request);
        this.budget = budget;
        this.deadlines = deadlines;
        this.bodyTimeoutMillis = bodyTimeoutMillis;
        this.maxMessageSize = maxMessageSize;
        this.refuse = refuse;
        request.response().closeHandler(ignored -> giveBack());
        request.response().endHandler(ignored -> giveBack());
    }

    @Override
    public HttpServerRequest handler(Handler<Buffer> handler) {
        delegate.handler(handler == null ? null : chunk -> {
            if (refused || ended) {
                return;
            }
            int size = chunk.length();
            long taken = budget.reserve(size);
            if (taken < size) {
                budget.release(taken);
                refuse(Refusal.OVER_BUDGET);
                return;
            }
            held += size;
            int end = framing.endOfLastMessage(chunk);
            if (framing.longestDeclared() > maxMessageSize) {
                refuse(Refusal.TOO_LARGE);
                return;
            }
            if (framing.sawCompressed()) {
                refuse(Refusal.COMPRESSED);
                return;
            }
            if (end >= 0) { // the messages that end here go back: held from now on by their calls
                budget.release(held - (size - end));
                held = size - end;
                if (stall != null) {
                    deadlines.disarm(stall);
                }
            }
            if (held > 0 && (stall == null || !stall.armed())) { // a message begun here is unfinished
                if (stall == null) {
                    stall = new Stall();
                }
                deadlines.arm(stall, bodyTimeoutMillis);
            }
            handler.handle(chunk);
        });
        return this;
    }

    /** The end of a refused call is dropped too: the gRPC layer must not answer a call the refusal already ended. */
    @Override
    public HttpServerRequest endHandler(Handler<Void> handler) {
        delegate.endHandler(handler == null ? null : ended -> {
            if (!refused) {
                handler.handle(ended);
            }
        });
        return this;
    }

    private void refuse(Refusal refusal) {
        refused = true;
        refuse.accept(delegate, refusal);
    }

    /** A message of this call that has not all arrived, armed on the event loop's deadlines. */
    private final class Stall extends RequestDeadlines.Deadline {

        @Override
        void expire() {
            if (!refused && !ended) {
                refuse(Refusal.STALLED);
            }
        }
    }

    /** The stream ended (answered, reset or closed): what an unfinished message held goes back. */
    private void giveBack() {
        if (stall != null) {
            deadlines.disarm(stall);
        }
        if (!ended) {
            ended = true;
            budget.release(held);
            held = 0;
        }
    }
}
