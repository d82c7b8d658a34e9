package dev.serval.api.grpc;

import dev.serval.api.http.ByteBudget;
import dev.serval.api.http.RequestDeadlines;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.HttpServerRequestInternal;
import io.vertx.core.http.impl.HttpServerRequestWrapper;
import io.vertx.grpc.server.GrpcServer;
import java.util.ArrayDeque;
import java.util.function.BiConsumer;

/**
 * A gRPC call's request bytes, counted in the server's budget of request bytes held ({@code
 * serval.http.max-buffered-bytes}, {@link ByteBudget}) and in its connection's share ({@link GrpcConnectionShare})
 * from the moment they arrive until the call is answered or gone, as a REST body's are: each chunk is taken as it
 * arrives, and a chunk that does not fit refuses the call ({@code refuse}), nothing more of it read.
 *
 * <ul>
 *   <li>A unary call's bytes (its message, whole or not) are held until the call ends: answered, reset or its
 *       connection closed. Its request, message and end of stream (the client's half-close), must all arrive within
 *       {@code serval.http.body-timeout} of its headers, or the call is refused ({@link Refusal#UNENDED} when the
 *       message came but the end did not, else {@link Refusal#STALLED}): a client cannot park a whole message.</li>
 *   <li>A stream's ({@code ModelStreamInfer}) whole messages are held until the service {@link #take}s them, in order,
 *       as the gRPC layer hands them over (messages queued in the gRPC layer while the stream is paused stay counted);
 *       from then on the service holds them until the request's answer ({@link Held#release}). A message must all
 *       arrive within {@code serval.http.body-timeout} of its first bytes ({@link Refusal#STALLED}). What is still
 *       held when the stream ends goes back.</li>
 * </ul>
 *
 * <p>The framing ({@link GrpcFraming}) hands the gRPC layer whole messages only, composed of the chunks without a copy.
 * It also refuses, in the chunk where the prefix arrives, a message longer than {@code serval.http.max-body-size} (the
 * gRPC layer would answer it itself, but then also end the call a second time) and a compressed message (its length
 * says nothing of what it inflates to, and the gRPC layer would inflate it whole, unbounded, before anything could look
 * at it). A refused call's later chunks and its end are dropped.
 *
 * <p>Threads: the connection's event loop only. Vert.x calls the handlers there; the service takes and releases a
 * stream's messages there.
 */
final class GrpcBytesInTransit extends HttpServerRequestWrapper {

    /** Why a call is refused at the edge. */
    enum Refusal {
        /** Its bytes do not fit the server's budget. */
        OVER_BUDGET,
        /** Its connection has {@code serval.grpc.max-calls-per-connection} calls open. */
        CONNECTION_CALLS,
        /** Its bytes do not fit its connection's share, {@code serval.grpc.max-bytes-per-connection}. */
        CONNECTION_BYTES,
        /** A message declares more bytes than {@code serval.http.max-body-size}. */
        TOO_LARGE,
        /** A message is compressed. */
        COMPRESSED,
        /** A message did not all arrive within {@code serval.http.body-timeout}. */
        STALLED,
        /** A unary call's message arrived, but not its end of stream, within {@code serval.http.body-timeout}. */
        UNENDED
    }

    /** The call being handed to the gRPC server on this thread: its call handlers run within {@link #handTo}. */
    private static final ThreadLocal<GrpcBytesInTransit> HANDING = new ThreadLocal<>();

    private final ByteBudget budget;
    private final GrpcConnectionShare share;
    private final RequestDeadlines deadlines;
    private final long bodyTimeoutMillis;
    private final boolean unary;
    private final long maxMessageSize;
    private final BiConsumer<HttpServerRequest, Refusal> refuse;
    private final GrpcFraming framing = new GrpcFraming();
    /**
     * Armed on {@link #deadlines}: a unary call's from its headers to its end, a stream's while a message is
     * unfinished.
     */
    private final Stall stall = new Stall();
    /** Whole messages read from the current chunk, handed to the gRPC layer once the chunk is checked. */
    private final ArrayDeque<Buffer> whole = new ArrayDeque<>(2);
    /** A stream's whole messages' sizes, in order, handed to the gRPC layer and not yet taken by the service. */
    private final ArrayDeque<Integer> untaken = new ArrayDeque<>();
    /** Bytes of the call taken from the budget and the share and not given back nor taken by the service. */
    private long held;
    private boolean messageArrived;
    private boolean clientEnded;
    private boolean refused;
    private boolean over;

    /**
     * @param share             the connection's share, with this call already counted open
     *                          ({@link GrpcConnectionShare#open})
     * @param deadlines         the calling event loop's deadlines, where a call or message waits
     * @param bodyTimeoutMillis how long a unary call's request, or a stream's message, may take to arrive
     * @param unary             whether the call is unary (else a stream of messages: {@code ModelStreamInfer})
     * @param maxMessageSize    the longest message a call may declare ({@code serval.http.max-body-size})
     * @param refuse            ends a call, for the reason given, before the gRPC layer sees the chunk that refused it
     */
    GrpcBytesInTransit(HttpServerRequest request, ByteBudget budget, GrpcConnectionShare share,
            RequestDeadlines deadlines, long bodyTimeoutMillis, boolean unary, long maxMessageSize,
            BiConsumer<HttpServerRequest, Refusal> refuse) {
        super((HttpServerRequestInternal) request);
        this.budget = budget;
        this.share = share;
        this.deadlines = deadlines;
        this.bodyTimeoutMillis = bodyTimeoutMillis;
        this.unary = unary;
        this.maxMessageSize = maxMessageSize;
        this.refuse = refuse;
        if (unary) {
            deadlines.arm(stall, bodyTimeoutMillis);
        }
    }

    /** Hands this call to {@code server}, whose call handler may then find it with {@link #handing}. */
    void handTo(GrpcServer server) {
        HANDING.set(this);
        try {
            server.handle(this);
        } finally {
            HANDING.remove();
        }
    }

    /** In a call handler: the call being handed to the gRPC server (the handler runs within {@link #handTo}). */
    static GrpcBytesInTransit handing() {
        GrpcBytesInTransit call = HANDING.get();
        if (call == null) {
            throw new IllegalStateException("no gRPC call is being handed over on " + Thread.currentThread().getName());
        }
        return call;
    }

    @Override
    public HttpServerRequest handler(Handler<Buffer> handler) {
        delegate.handler(handler == null ? null : chunk -> {
            if (refused || over) {
                return;
            }
            int size = chunk.length();
            if (!share.take(size)) {
                refuse(Refusal.CONNECTION_BYTES);
                return;
            }
            long taken = budget.reserve(size);
            if (taken < size) {
                budget.release(taken);
                share.giveBack(size);
                refuse(Refusal.OVER_BUDGET);
                return;
            }
            held += size;
            framing.read(chunk, whole::add);
            if (framing.longestDeclared() > maxMessageSize) {
                whole.clear();
                refuse(Refusal.TOO_LARGE);
                return;
            }
            if (framing.sawCompressed()) {
                whole.clear();
                refuse(Refusal.COMPRESSED);
                return;
            }
            if (!unary) {
                if (!whole.isEmpty()) {
                    deadlines.disarm(stall); // the message it timed has come
                }
                if (framing.unfinished() > 0 && !stall.armed()) {
                    deadlines.arm(stall, bodyTimeoutMillis);
                }
            }
            for (Buffer message; (message = whole.poll()) != null && !refused && !over; ) {
                messageArrived = true;
                if (!unary) {
                    untaken.add(message.length());
                }
                handler.handle(message);
            }
            whole.clear(); // what the call ended before handing on is dropped with it
        });
        return this;
    }

    /**
     * The end of a refused call is dropped too: the gRPC layer must not answer a call the refusal already ended. A
     * unary call's end stops its clock.
     */
    @Override
    public HttpServerRequest endHandler(Handler<Void> handler) {
        delegate.endHandler(handler == null ? null : ended -> {
            if (!refused) {
                clientEnded = true;
                if (unary) {
                    deadlines.disarm(stall);
                }
                handler.handle(ended);
            }
        });
        return this;
    }

    /**
     * A stream's next message, as the gRPC layer hands it to the service (in order): its bytes move from this call's
     * count to the returned hold, which the service releases once the message's request is answered.
     */
    Held take() {
        assert Context.isOnEventLoopThread();
        Integer size = untaken.poll();
        if (size == null) { // the stream ended and gave everything back
            return Held.NOTHING;
        }
        held -= size;
        return new Held(budget, share, size);
    }

    private void refuse(Refusal refusal) {
        refused = true;
        deadlines.disarm(stall);
        refuse.accept(delegate, refusal);
    }

    /** The clock of the call's request (unary) or of its unfinished message (stream). */
    private final class Stall extends RequestDeadlines.Deadline {

        @Override
        protected void expire() {
            if (!refused && !over && !clientEnded) {
                refuse(unary && messageArrived && framing.unfinished() == 0 ? Refusal.UNENDED : Refusal.STALLED);
            }
        }
    }

    /**
     * The stream ended (answered, reset or closed): what the call still holds goes back, and the call closes. Its
     * creator calls it when the response ends or closes, through whoever owns the response's end and close handlers
     * (the routing context on the HTTP port, so that the other routes' end handlers, the stream limit's among them,
     * still run); idempotent.
     */
    void giveBack() {
        deadlines.disarm(stall);
        if (!over) {
            over = true;
            untaken.clear();
            budget.release(held);
            share.giveBack(held);
            held = 0;
            share.close();
        }
    }

    /** Bytes of a stream's message the service holds until its request is answered; released once. */
    static final class Held {

        static final Held NOTHING = new Held(null, null, 0);

        private final ByteBudget budget;
        private final GrpcConnectionShare share;
        private long size;

        private Held(ByteBudget budget, GrpcConnectionShare share, long size) {
            this.budget = budget;
            this.share = share;
            this.size = size;
        }

        /** Gives the bytes back (on the connection's event loop); nothing after the first time. */
        void release() {
            if (size > 0) {
                budget.release(size);
                share.giveBack(size);
                size = 0;
            }
        }
    }
}
