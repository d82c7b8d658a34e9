package dev.serval.api.http;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.HttpServerRequestInternal;
import io.vertx.core.http.impl.HttpServerRequestWrapper;
import java.util.function.Consumer;

/**
 * A gRPC call's request bytes count in the server's budget of request bytes held ({@code serval.http.max-buffered-bytes},
 * {@link ByteBudget}) from the moment they arrive, as a REST body's do: Vert.x's gRPC layer buffers a message until it
 * has all of it (up to {@code serval.http.max-body-size}), and many streams could each hold most of one. Each chunk is
 * taken from the budget as it arrives; the bytes of a message are given back when its last byte arrives, just before
 * the gRPC layer hands the message over (from then on the call holds the message's bytes until its answer:
 * {@code GrpcInferenceService.run}); the bytes of a message never completed are given back when the stream ends. A
 * chunk that does not fit refuses the call ({@code refuse}) and nothing more of it is read.
 *
 * <p>A compressed message refuses the call too ({@code refuseCompressed}), in the chunk where its flag arrives: its
 * length says nothing of what it inflates to, and the gRPC layer would inflate it whole, unbounded, before anything
 * could look at it.
 *
 * <p>Messages are found by their gRPC framing ({@link GrpcFraming}). Event loop only: Vert.x calls the handlers on the
 * connection's event loop.
 */
final class GrpcBytesInTransit extends HttpServerRequestWrapper {

    private final ByteBudget budget;
    private final Consumer<HttpServerRequest> refuse;
    private final Consumer<HttpServerRequest> refuseCompressed;
    private final GrpcFraming framing = new GrpcFraming();
    /** Bytes of the message being received (prefix included) taken from the budget and not given back. */
    private long held;
    private boolean refused;
    private boolean ended;

    /**
     * @param refuse           ends a call whose bytes do not fit the budget
     * @param refuseCompressed ends a call that sent a compressed message, before the gRPC layer sees it
     */
    GrpcBytesInTransit(HttpServerRequest request, ByteBudget budget, Consumer<HttpServerRequest> refuse,
            Consumer<HttpServerRequest> refuseCompressed) {
        super((HttpServerRequestInternal) request);
        this.budget = budget;
        this.refuse = refuse;
        this.refuseCompressed = refuseCompressed;
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
                refused = true;
                refuse.accept(delegate);
                return;
            }
            held += size;
            int end = framing.endOfLastMessage(chunk);
            if (framing.sawCompressed()) {
                refused = true;
                refuseCompressed.accept(delegate);
                return;
            }
            if (end >= 0) { // the messages that end here go back: held from now on by their calls
                budget.release(held - (size - end));
                held = size - end;
            }
            handler.handle(chunk);
        });
        return this;
    }

    /** The stream ended (answered, reset or closed): what an unfinished message held goes back. */
    private void giveBack() {
        if (!ended) {
            ended = true;
            budget.release(held);
            held = 0;
        }
    }
}
