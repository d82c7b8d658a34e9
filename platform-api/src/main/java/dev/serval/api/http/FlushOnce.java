package dev.serval.api.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * One flush per gRPC answer. Outside a read, Vert.x's HTTP/2 stream flushes after each frame it writes, so a unary
 * answer (headers, data, trailers) costs two flushes, each a system call, and they were the largest single cost of a
 * no-op gRPC call. {@link #around} runs the writes of one answer with this handler, first in the connection's
 * pipeline (next to the socket), holding the flushes they make; then flushes once: the frames leave together.
 *
 * <p>Reaches the Netty channel through Vert.x's {@code ConnectionBase}, an internal class of Vert.x 4.5; a connection
 * that is not one (another Vert.x, a test double), or writes made off its event loop, are written as Vert.x does.
 * Event loop only: the handler's two flags belong to the connection's event loop, which is the only thread that writes
 * to it or runs {@link #around} with it.
 */
public final class FlushOnce extends ChannelOutboundHandlerAdapter {

    private static final String NAME = "serval-flush-once";

    private boolean holding;
    private boolean held;

    private FlushOnce() {
    }

    /** Runs {@code writes} (on {@code connection}'s event loop) with their flushes held, then flushes once. */
    public static void around(HttpConnection connection, Runnable writes) {
        if (connection instanceof ConnectionBase base) {
            around(base.channel(), writes);
        } else {
            writes.run();
        }
    }

    /** Runs {@code writes} with the flushes they make on {@code channel} held, then flushes once. */
    static void around(Channel channel, Runnable writes) {
        if (!channel.eventLoop().inEventLoop()) {
            writes.run();
            return;
        }
        ChannelPipeline pipeline = channel.pipeline();
        FlushOnce handler = (FlushOnce) pipeline.get(NAME);
        if (handler == null) {
            handler = new FlushOnce();
            pipeline.addFirst(NAME, handler);
        }
        handler.holding = true;
        try {
            writes.run();
        } finally {
            handler.holding = false;
            if (handler.held) {
                handler.held = false;
                channel.flush();
            }
        }
    }

    @Override
    public void flush(ChannelHandlerContext context) {
        if (holding) {
            held = true;
        } else {
            context.flush();
        }
    }
}
