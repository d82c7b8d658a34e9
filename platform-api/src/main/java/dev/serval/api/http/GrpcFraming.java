package dev.serval.api.http;

import io.vertx.core.buffer.Buffer;

/**
 * Where gRPC messages end in a stream of chunks: each message is a flag byte, a four-byte big-endian length and that
 * many bytes. Fed the chunks in order, it says where in each the last message that ends there ends, the longest
 * length a message declared, and whether a message so far was compressed (the flag byte's low bit). One per stream;
 * not thread-safe (a stream's chunks arrive on its event loop).
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

    /** The longest length a message whose prefix has been read so far declared (0 before the first). */
    long longestDeclared() {
        return longestDeclared;
    }

    /** Whether a message whose prefix has been read so far is compressed (its flag byte's low bit). */
    boolean sawCompressed() {
        return compressed;
    }

    /** Reads {@code chunk}; returns the offset just after the last message that ends in it, or -1 when none does. */
    int endOfLastMessage(Buffer chunk) {
        int end = -1;
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
                end = position;
                prefixRead = 0;
                length = 0;
            }
        }
        return end;
    }
}
