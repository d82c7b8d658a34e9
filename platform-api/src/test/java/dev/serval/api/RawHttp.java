package dev.serval.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 written byte for byte on a socket, for requests that client libraries would normalise or refuse to send:
 * odd path spellings, a Content-Length whose body never comes.
 */
final class RawHttp {

    private RawHttp() {
    }

    /** An answer's status and its whole head and body as text. */
    record Answer(int status, String text) {
    }

    /**
     * Sends {@code head} (request line and headers, without the blank line), a blank line, then {@code body}, and
     * reads the answer until the server closes the connection ({@code Connection: close} is added) or 10 s pass.
     */
    static Answer send(URL base, String head, byte[] body) throws IOException {
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write((head + "\r\nHost: " + base.getHost() + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
            return read(socket.getInputStream());
        }
    }

    /** Reads the status line and what follows until end of stream (or the head only, if the server keeps it open). */
    static Answer read(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        byte[] buffer = new byte[8192];
        int n;
        try {
            while ((n = in.read(buffer)) > 0) {
                text.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
            }
        } catch (java.net.SocketTimeoutException e) {
            if (text.isEmpty()) {
                throw e;
            }
        }
        String all = text.toString();
        if (!all.startsWith("HTTP/1.1 ")) {
            throw new IOException("not an HTTP answer: " + all);
        }
        return new Answer(Integer.parseInt(all.substring(9, 12)), all);
    }
}
