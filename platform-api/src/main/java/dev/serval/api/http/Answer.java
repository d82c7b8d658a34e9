package dev.serval.api.http;

import java.io.ByteArrayOutputStream;
import java.util.Map;

/**
 * An HTTP answer built by the inference path, independent of the framework that sends it ({@link InferenceRoutes}
 * writes it to a Vert.x response); errors become one through {@link ErrorResponses.Failure}.
 *
 * @param status      the status code
 * @param contentType the Content-Type of the body
 * @param body        holds the encoded body in its first {@code length} bytes (an encoder's own buffer, not copied)
 * @param length      the body's length
 * @param headers     further headers (e.g. {@code Retry-After}, {@code Inference-Header-Content-Length}); may be empty
 */
record Answer(int status, String contentType, byte[] body, int length, Map<String, String> headers) {

    static final String JSON = "application/json";
    static final String OCTET_STREAM = "application/octet-stream";

    Answer {
        if (length < 0 || length > body.length) {
            throw new IllegalArgumentException("length " + length + " outside a body array of " + body.length);
        }
    }

    /** An answer whose body is all of {@code body}. */
    Answer(int status, String contentType, byte[] body, Map<String, String> headers) {
        this(status, contentType, body, body.length, headers);
    }

    /** A 200 with a JSON body and no further headers. */
    static Answer json(Bytes body) {
        return new Answer(200, JSON, body.array(), body.size(), Map.of());
    }

    /** An encoder's output, handed to an {@link Answer} without copying. Not thread-safe. */
    static final class Bytes extends ByteArrayOutputStream {

        Bytes(int capacity) {
            super(capacity);
        }

        /** The array holding the bytes written so far, in its first {@link #size()} bytes. */
        byte[] array() {
            return buf;
        }
    }
}
