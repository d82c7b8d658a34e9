package dev.serval.api.grpc;

import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import java.util.function.Consumer;

/**
 * Cuts a stream's chunks into whole gRPC messages: each message is a flag byte, a four-byte big-endian length and that
 * many bytes. Fed the chunks in order, it hands on every message, prefix included, from the chunk where it ends, and
 * says the longest length a message declared and whether a message so far was compressed (the flag byte's low bit).
 *
 * <p>A message is never copied here: one that ends in the chunk where it began is a slice of that chunk, and one
 * spread over chunks is a composite of their slices, so that each byte stays where it arrived. (Vert.x's gRPC layer,
 * fed chunks as they come, appends each to the part of a message received so far and then copies that part again:
 * a message of n bytes in 16 KiB frames cost about n²/32 KiB bytes copied. Fed whole messages, it only slices them.)
 *
 * <p>One per stream; not thread-safe (a stream's chunks arrive on its event loop).
 */
final class GrpcFraming {

    private static final int PREFIX = 5;

    /** Prefix bytes of the current message read so far (0 to 5), its length as read, and its payload still to come. */
    private int prefixRead;
    private long length;
    private long payloadLeft;
    /** Whether a message read so far has its compressed flag set. */
    private boolean compressed;
    /** The longest length a message has declared so far. */
    private long longestDeclared;
    /** The slices of the earlier chunks of the message being read; null when it began in the current chunk. */
    private CompositeByteBuf parts;

    /** The longest length a message whose prefix has been read so far declared (0 before the first). */
    long longestDeclared() {
        return longestDeclared;
    }

    /** Whether a message whose prefix has been read so far is compressed (its flag byte's low bit). */
    boolean sawCompressed() {
        return compressed;
    }

    /** Bytes of the message not yet whole that have been read (prefix included). */
    int unfinished() {
        return parts == null ? 0 : parts.readableBytes();
    }

    /** Reads {@code chunk}, handing each message that ends in it to {@code whole}, in order. */
    void read(Buffer chunk, Consumer<Buffer> whole) {
        int start = 0; // where, in this chunk, the message being read began (or 0: in an earlier chunk)
        int position = 0;
        while (position < chunk.length()) {
            if (prefixRead < PREFIX) {
                if (prefixRead > 0) {
                    length = (length << 8) | (chunk.getByte(position) & 0xff);
                } else if ((chunk.getByte(position) & 1) != 0) {
                    compressed = true;
                }
                position++;
                if (++prefixRead == PREFIX) {
                    payloadLeft = length;
                    longestDeclared = Math.max(longestDeclared, length);
                }
            } else {
                int take = (int) Math.min(payloadLeft, chunk.length() - position);
                position += take;
                payloadLeft -= take;
            }
            if (prefixRead == PREFIX && payloadLeft == 0) {
                whole.accept(whole(chunk, start, position));
                start = position;
                prefixRead = 0;
                length = 0;
            }
        }
        if (start < chunk.length()) {
            if (parts == null) {
                parts = Unpooled.compositeBuffer(Integer.MAX_VALUE); // never consolidated: that would copy
            }
            parts.addComponent(true, chunk.slice(start, chunk.length()).getByteBuf());
        }
    }

    /** The message that ends at {@code end} of {@code chunk}: its slice, after the parts from earlier chunks. */
    private Buffer whole(Buffer chunk, int start, int end) {
        Buffer last = chunk.slice(start, end);
        if (parts == null) {
            return last;
        }
        parts.addComponent(true, last.getByteBuf());
        Buffer message = Buffer.buffer(parts);
        parts = null;
        return message;
    }
}
