package dev.serval.api.http;

import java.util.Map;

/**
 * An HTTP answer built by the inference path, independent of the framework that sends it ({@link InferenceRoutes}
 * writes it to a Vert.x response); errors become one through {@link ErrorResponses.Failure}.
 *
 * @param status      the status code
 * @param contentType the Content-Type of {@code body}
 * @param body        the encoded body
 * @param headers     further headers (e.g. {@code Retry-After}, {@code Inference-Header-Content-Length}); may be empty
 */
record Answer(int status, String contentType, byte[] body, Map<String, String> headers) {

    static final String JSON = "application/json";
    static final String OCTET_STREAM = "application/octet-stream";

    /** A 200 with a JSON body and no further headers. */
    static Answer json(byte[] body) {
        return new Answer(200, JSON, body, Map.of());
    }
}
