package dev.serval.api;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/2 over cleartext (h2c, prior knowledge) written frame by frame on a socket, for what no client library sends:
 * streams past the advertised limit, SETTINGS never acknowledged, floods of CONTINUATION or RST_STREAM frames. Header
 * blocks are HPACK literals without indexing or Huffman coding; answers' header blocks are decoded with Netty's
 * decoder. One thread uses an instance.
 */
final class RawH2 implements Closeable {

    static final int DATA = 0x0;
    static final int HEADERS = 0x1;
    static final int RST_STREAM = 0x3;
    static final int SETTINGS = 0x4;
    static final int PING = 0x6;
    static final int GOAWAY = 0x7;
    static final int WINDOW_UPDATE = 0x8;
    static final int CONTINUATION = 0x9;

    static final int END_STREAM = 0x1;
    static final int ACK = 0x1;
    static final int END_HEADERS = 0x4;

    static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

    static final int REFUSED_STREAM = 0x7;
    static final int CANCEL = 0x8;

    /** One frame as read. */
    record Frame(int type, int flags, int stream, byte[] payload, Http2Headers headers) {

        Frame(int type, int flags, int stream, byte[] payload) {
            this(type, flags, stream, payload, null);
        }

        boolean has(int flag) {
            return (flags & flag) != 0;
        }

        /** RST_STREAM's or GOAWAY's error code. */
        int errorCode() {
            int at = type == GOAWAY ? 4 : 0;
            return ((payload[at] & 0xff) << 24) | ((payload[at + 1] & 0xff) << 16) | ((payload[at + 2] & 0xff) << 8)
                    | (payload[at + 3] & 0xff);
        }

        /** A SETTINGS frame's value for {@code id}, or -1 when it carries none. */
        long setting(int id) {
            long value = -1;
            for (int i = 0; i + 6 <= payload.length; i += 6) {
                if ((((payload[i] & 0xff) << 8) | (payload[i + 1] & 0xff)) == id) {
                    value = ((long) (payload[i + 2] & 0xff) << 24) | ((payload[i + 3] & 0xff) << 16)
                            | ((payload[i + 4] & 0xff) << 8) | (payload[i + 5] & 0xff);
                }
            }
            return value;
        }

        @Override
        public String toString() {
            return "Frame[type=" + type + ", flags=" + flags + ", stream=" + stream + ", length=" + payload.length + "]";
        }
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);

    /**
     * Connects, sends the connection preface and a SETTINGS frame of {@code settings} (id, value pairs), and does not
     * acknowledge the server's SETTINGS: {@link #ackSettings} does.
     */
    RawH2(String host, int port, long... settings) throws IOException {
        this(new Socket(host, port), settings);
    }

    /**
     * As {@link #RawH2(String, int, long...)}, from the loopback address {@code from} (any of 127.0.0.0/8), so that a
     * test's client address is its own: the server bounds some things per client address.
     */
    static RawH2 from(String from, String host, int port, long... settings) throws IOException {
        return new RawH2(new Socket(host, port, InetAddress.getByName(from), 0), settings);
    }

    private RawH2(Socket socket, long... settings) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] payload = new byte[settings.length / 2 * 6];
        for (int i = 0; i + 1 < settings.length; i += 2) {
            int at = i / 2 * 6;
            payload[at] = (byte) (settings[i] >> 8);
            payload[at + 1] = (byte) settings[i];
            int value = (int) settings[i + 1];
            payload[at + 2] = (byte) (value >>> 24);
            payload[at + 3] = (byte) (value >>> 16);
            payload[at + 4] = (byte) (value >>> 8);
            payload[at + 5] = (byte) value;
        }
        frame(SETTINGS, 0, 0, payload);
        out.flush();
    }

    /** Reads until the server's first SETTINGS frame (not an acknowledgement) and returns it. */
    Frame serverSettings() throws IOException {
        for (Frame frame; (frame = read()) != null; ) {
            if (frame.type() == SETTINGS && !frame.has(ACK)) {
                return frame;
            }
        }
        throw new EOFException("the server closed the connection before its SETTINGS");
    }

    void ackSettings() throws IOException {
        frame(SETTINGS, ACK, 0, new byte[0]);
        out.flush();
    }

    /** A header block of literal fields, {@code fields} as name, value pairs. */
    static byte[] headerBlock(String... fields) {
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        for (int i = 0; i < fields.length; i += 2) {
            block.write(0); // literal header field without indexing, new name
            string(block, fields[i]);
            string(block, fields[i + 1]);
        }
        return block.toByteArray();
    }

    /** The header block of a POST to {@code path}. */
    static byte[] post(String path, String contentType) {
        return headerBlock(":method", "POST", ":scheme", "http", ":path", path, ":authority", "localhost",
                "content-type", contentType);
    }

    /** The header block of a GET of {@code path}. */
    static byte[] get(String path) {
        return headerBlock(":method", "GET", ":scheme", "http", ":path", path, ":authority", "localhost");
    }

    private static void string(ByteArrayOutputStream block, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        integer(block, bytes.length, 7, 0);
        block.writeBytes(bytes);
    }

    private static void integer(ByteArrayOutputStream block, int value, int prefixBits, int firstBits) {
        int max = (1 << prefixBits) - 1;
        if (value < max) {
            block.write(firstBits | value);
            return;
        }
        block.write(firstBits | max);
        value -= max;
        while (value >= 128) {
            block.write((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        block.write(value);
    }

    /** Writes (without flushing) one frame. */
    void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        byte[] head = {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length,
            (byte) type, (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
            (byte) stream};
        out.write(head);
        out.write(payload);
    }

    /** HEADERS (with END_HEADERS) on {@code stream}, ending the stream when asked. Not flushed. */
    void headers(int stream, byte[] block, boolean endStream) throws IOException {
        frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), stream, block);
    }

    void rst(int stream, int code) throws IOException {
        frame(RST_STREAM, 0, stream, new byte[] {(byte) (code >>> 24), (byte) (code >>> 16), (byte) (code >>> 8),
            (byte) code});
    }

    void data(int stream, byte[] bytes, boolean endStream) throws IOException {
        frame(DATA, endStream ? END_STREAM : 0, stream, bytes);
    }

    void flush() throws IOException {
        out.flush();
    }

    /**
     * The next frame, or null once the server closed the connection; throws on a 10 s silence. A HEADERS frame comes
     * with its header block decoded (CONTINUATION frames joined to it), so that the HPACK table follows the server's.
     */
    Frame read() throws IOException {
        Frame frame = readOne();
        if (frame == null || frame.type() != HEADERS) {
            return frame;
        }
        byte[] payload = frame.payload();
        int from = 0;
        int to = payload.length;
        if (frame.has(0x8)) { // PADDED
            from = 1;
            to -= payload[0] & 0xff;
        }
        if (frame.has(0x20)) { // PRIORITY
            from += 5;
        }
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        block.write(payload, from, to - from);
        boolean ended = frame.has(END_HEADERS);
        while (!ended) {
            Frame continuation = readOne();
            if (continuation == null) {
                return null;
            }
            block.writeBytes(continuation.payload());
            ended = continuation.has(END_HEADERS);
        }
        return new Frame(frame.type(), frame.flags(), frame.stream(), frame.payload(),
                decode(frame.stream(), block.toByteArray()));
    }

    private Frame readOne() throws IOException {
        byte[] head = new byte[9];
        try {
            in.readFully(head);
        } catch (EOFException | SocketException e) {
            return null; // closed (a reset after the server's close counts as closed)
        }
        int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
        byte[] payload = new byte[length];
        try {
            in.readFully(payload);
        } catch (EOFException | SocketException e) {
            return null;
        }
        int stream = ((head[5] & 0x7f) << 24) | ((head[6] & 0xff) << 16) | ((head[7] & 0xff) << 8) | (head[8] & 0xff);
        return new Frame(head[3] & 0xff, head[4] & 0xff, stream, payload);
    }

    /** The next frame of one of {@code types}, skipping others; null once the connection is closed. */
    Frame readUntil(int... types) throws IOException {
        for (Frame frame; (frame = read()) != null; ) {
            for (int type : types) {
                if (frame.type() == type) {
                    return frame;
                }
            }
        }
        return null;
    }

    private Http2Headers decode(int stream, byte[] bytes) {
        ByteBuf block = Unpooled.wrappedBuffer(bytes);
        try {
            return decoder.decodeHeaders(stream, block);
        } catch (Http2Exception e) {
            throw new AssertionError("the server's header block does not decode", e);
        } finally {
            block.release();
        }
    }

    /**
     * A rapid-reset flood: acknowledges the server's SETTINGS, then sends {@code pairs} HEADERS (of {@code block},
     * ending their streams) each followed by its RST_STREAM; whether the server sent the connection away (a GOAWAY,
     * or closed while the flood was written).
     */
    boolean resetFlood(int pairs, byte[] block) throws IOException {
        serverSettings();
        ackSettings();
        try {
            for (int i = 0; i < pairs; i++) {
                headers(1 + 2 * i, block, true);
                rst(1 + 2 * i, CANCEL);
            }
            flush();
        } catch (IOException closed) {
            return true; // the server closed the connection while the flood was being written
        }
        return readUntil(GOAWAY) != null || closedByServer();
    }

    /** Whether the server closed the connection: reads (and drops) frames until end of stream, or a 10 s silence. */
    boolean closedByServer() throws IOException {
        try {
            while (read() != null) {
                // drop
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
