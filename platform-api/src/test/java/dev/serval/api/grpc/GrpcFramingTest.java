package dev.serval.api.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GrpcFramingTest {

    private static Buffer message(int payload) {
        Buffer message = Buffer.buffer().appendByte((byte) 0).appendInt(payload);
        for (int i = 0; i < payload; i++) {
            message.appendByte((byte) (i * 31 + 7));
        }
        return message;
    }

    /** The whole messages that {@code chunk} ends, in order. */
    private static List<Buffer> read(GrpcFraming framing, Buffer chunk) {
        List<Buffer> whole = new ArrayList<>();
        framing.read(chunk, whole::add);
        return whole;
    }

    @Test
    void aWholeMessageIsHandedOnAsItCame() {
        assertEquals(List.of(message(10)), read(new GrpcFraming(), message(10)));
    }

    @Test
    void severalMessagesInOneChunkAreHandedOnOneByOne() {
        Buffer chunk = message(3).appendBuffer(message(0)).appendBuffer(message(4)).appendBuffer(message(9)
                .getBuffer(0, 7)); // and the start of a fourth
        GrpcFraming framing = new GrpcFraming();
        assertEquals(List.of(message(3), message(0), message(4)), read(framing, chunk));
        assertEquals(7, framing.unfinished());
        assertEquals(List.of(message(9)), read(framing, message(9).getBuffer(7, 14)), "the fourth, with its rest");
        assertEquals(0, framing.unfinished());
    }

    @Test
    void aMessageSplitAnywhereIsHandedOnWholeFromItsLastChunk() {
        Buffer whole = message(300);
        for (int first = 1; first < whole.length(); first += 37) {
            for (int second = first; second < whole.length(); second += 53) {
                GrpcFraming framing = new GrpcFraming();
                assertEquals(List.of(), read(framing, whole.getBuffer(0, first)));
                assertEquals(List.of(), read(framing, whole.getBuffer(first, second)));
                assertEquals(List.of(whole), read(framing, whole.getBuffer(second, whole.length())),
                        "split at " + first + " and " + second);
            }
        }
    }

    /**
     * Issue 37: Vert.x's gRPC layer copied the part of a message received so far on every chunk (a 16 KiB HTTP/2
     * frame), so a message of n bytes cost n²/32 KiB bytes copied. A message spread over chunks is composed of the
     * chunks themselves: each byte stays where it arrived (shown by changing a chunk after it was read: the message
     * sees it), and the gRPC layer is handed whole messages only, which it slices without a copy.
     */
    @Test
    void aMessageOverManyChunksIsComposedOfThemNotCopied() {
        Buffer whole = message(1 << 20);
        GrpcFraming framing = new GrpcFraming();
        List<Buffer> chunks = new ArrayList<>();
        List<Buffer> messages = new ArrayList<>();
        for (int start = 0; start < whole.length(); start += 16 << 10) {
            Buffer chunk = whole.getBuffer(start, Math.min(whole.length(), start + (16 << 10)));
            chunks.add(chunk);
            framing.read(chunk, messages::add);
            assertEquals(chunks.size() * (16 << 10) < whole.length() ? 0 : 1, messages.size());
        }
        assertEquals(whole, messages.get(0));

        chunks.get(7).setByte(100, (byte) 0x5a);
        assertEquals(0x5a, messages.get(0).getByte(7 * (16 << 10) + 100), "the message shares the chunk's bytes");
    }

    @Test
    void aLengthIsReadAsAnUnsignedBigEndianNumber() {
        GrpcFraming framing = new GrpcFraming();
        Buffer prefix = Buffer.buffer().appendByte((byte) 0).appendInt(0x01000000); // 16 MiB declared
        assertEquals(List.of(), read(framing, prefix));
        assertEquals(1 << 24, framing.longestDeclared());
        assertEquals(List.of(), read(framing, Buffer.buffer(new byte[1 << 16])));
        GrpcFraming huge = new GrpcFraming();
        read(huge, Buffer.buffer().appendByte((byte) 0).appendInt(0xffffffff));
        assertEquals(0xffffffffL, huge.longestDeclared(), "4 GiB - 1, not -1");
    }

    @Test
    void aCompressedFlagIsSeenInWhicheverMessageAndChunkItComes() {
        GrpcFraming framing = new GrpcFraming();
        read(framing, message(3).appendBuffer(message(2)));
        assertFalse(framing.sawCompressed(), "flag 0: uncompressed");
        // A payload byte of 1 is not a flag: only the first byte of each prefix is.
        read(framing, Buffer.buffer().appendByte((byte) 0).appendInt(2).appendBytes(new byte[] {1, 1}));
        assertFalse(framing.sawCompressed(), "payload bytes are not flags");
        Buffer compressed = Buffer.buffer().appendByte((byte) 1).appendInt(4).appendBytes(new byte[4]);
        read(framing, message(1).appendBuffer(compressed.getBuffer(0, 1)));
        assertTrue(framing.sawCompressed(), "the third message's flag, at the end of a chunk");
    }
}
