package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class FlushOnceTest {

    /** Counts the flushes that reach the socket (it sits next to the head, below FlushOnce). */
    private static final class Flushes extends ChannelOutboundHandlerAdapter {
        int count;

        @Override
        public void flush(ChannelHandlerContext context) {
            count++;
            context.flush();
        }
    }

    @Test
    void theWritesOfOneAnswerLeaveInOneFlushWithEverythingTheyWrote() {
        EmbeddedChannel channel = new EmbeddedChannel();
        FlushOnce.around(channel, () -> { }); // installs the handler
        Flushes flushes = new Flushes();
        channel.pipeline().addFirst(flushes);

        FlushOnce.around(channel, () -> {
            channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1})); // headers
            channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {2})); // data
            channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {3})); // trailers
        });
        assertEquals(1, flushes.count);
        assertEquals(3, channel.outboundMessages().size());

        channel.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {4}));
        assertEquals(2, flushes.count, "outside an answer every flush goes through");
        FlushOnce.around(channel, () -> { });
        assertEquals(2, flushes.count, "nothing written, nothing flushed");
        channel.finishAndReleaseAll();
    }
}
