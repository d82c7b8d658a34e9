package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

class GrpcFramingTest {

    private static Buffer message(int payload) {
        return Buffer.buffer().appendByte((byte) 0).appendInt(payload).appendBytes(new byte[payload]);
    }

    @Test
    void aWholeMessageEndsWhereTheChunkEnds() {
        assertEquals(15, new GrpcFraming().endOfLastMessage(message(10)));
    }

    @Test
    void severalMessagesInOneChunkEndAtTheLastOne() {
        Buffer chunk = message(3).appendBuffer(message(0)).appendBuffer(message(4)).appendBuffer(message(9)
                .getBuffer(0, 7)); // and the start of a fourth
        GrpcFraming framing = new GrpcFraming();
        assertEquals(8 + 5 + 9, framing.endOfLastMessage(chunk));
        assertEquals(7, framing.endOfLastMessage(message(9).getBuffer(7, 14)), "the fourth's rest");
    }

    @Test
    void aMessageSplitAnywhereEndsInItsLastChunk() {
        Buffer whole = message(300);
        for (int first = 1; first < whole.length(); first += 37) {
            for (int second = first; second < whole.length(); second += 53) {
                GrpcFraming framing = new GrpcFraming();
                assertEquals(-1, framing.endOfLastMessage(whole.getBuffer(0, first)));
                assertEquals(-1, framing.endOfLastMessage(whole.getBuffer(first, second)));
                assertEquals(whole.length() - second, framing.endOfLastMessage(whole.getBuffer(second, whole.length())),
                        "split at " + first + " and " + second);
            }
        }
    }

    @Test
    void aLengthIsReadAsAnUnsignedBigEndianNumber() {
        GrpcFraming framing = new GrpcFraming();
        Buffer prefix = Buffer.buffer().appendByte((byte) 0).appendInt(0x01000000); // 16 MiB declared
        assertEquals(-1, framing.endOfLastMessage(prefix));
        assertEquals(1 << 24, framing.longestDeclared());
        assertEquals(-1, framing.endOfLastMessage(Buffer.buffer(new byte[1 << 16])));
        GrpcFraming huge = new GrpcFraming();
        huge.endOfLastMessage(Buffer.buffer().appendByte((byte) 0).appendInt(0xffffffff));
        assertEquals(0xffffffffL, huge.longestDeclared(), "4 GiB - 1, not -1");
    }

    @Test
    void aCompressedFlagIsSeenInWhicheverMessageAndChunkItComes() {
        GrpcFraming framing = new GrpcFraming();
        framing.endOfLastMessage(message(3).appendBuffer(message(2)));
        assertFalse(framing.sawCompressed(), "flag 0: uncompressed");
        // A payload byte of 1 is not a flag: only the first byte of each prefix is.
        framing.endOfLastMessage(Buffer.buffer().appendByte((byte) 0).appendInt(2).appendBytes(new byte[] {1, 1}));
        assertFalse(framing.sawCompressed(), "payload bytes are not flags");
        Buffer compressed = Buffer.buffer().appendByte((byte) 1).appendInt(4).appendBytes(new byte[4]);
        framing.endOfLastMessage(message(1).appendBuffer(compressed.getBuffer(0, 1)));
        assertTrue(framing.sawCompressed(), "the third message's flag, at the end of a chunk");
    }
}
