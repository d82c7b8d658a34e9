package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Optional;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import io.vertx.core.http.HttpServerRequest;

/**
 * Request-body rules shared by the inference endpoints: the size limit ({@code serval.http.max-body-size}) and
 * the accepted media types. A declared Content-Length over the limit is refused with 413 before the body is
 * read; a chunked body is refused once read if it turns out larger (Quarkus's own
 * {@code quarkus.http.limits.max-body-size}, set above Serval's, caps what is read at all).
 */
@ApplicationScoped
public class RequestBodies {

    private final long maxBodySize;

    RequestBodies(ServalConfig config) {
        this.maxBodySize = config.http().maxBodySize().asLongValue();
    }

    @ServerRequestFilter(preMatching = true)
    public Optional<Response> refuseDeclaredOversizedBodies(HttpServerRequest request) {
        long length = declaredLength(request);
        if (length <= maxBodySize) {
            return Optional.empty();
        }
        ApiError error = tooLarge(length);
        return Optional.of(ErrorResponses.forPath(request.path(), error));
    }

    /** The body, checked against the limit; never null. */
    byte[] checkSize(byte[] body) {
        if (body == null) {
            return new byte[0];
        }
        if (body.length > maxBodySize) {
            throw tooLarge(body.length);
        }
        return body;
    }

    /** The request's Content-Length, or -1 when it has none or it is not a number (the body is then read to its end). */
    static long declaredLength(HttpServerRequest request) {
        String declared = request.getHeader("Content-Length");
        if (declared == null) {
            return -1;
        }
        try {
            return Long.parseLong(declared.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** {@code serval.http.max-body-size} in bytes. */
    long maxBodySize() {
        return maxBodySize;
    }

    /** The 413 for a body of {@code length} bytes. */
    ApiError tooLarge(long length) {
        return new ApiError(413, "request body of " + length + " bytes exceeds the limit of " + maxBodySize
                + " bytes (serval.http.max-body-size)");
    }

    /**
     * Accepts {@code application/json} (any parameters) and no Content-Type at all; with
     * {@code allowBinary}, also {@code application/octet-stream} (the binary tensor data extension).
     */
    static void checkContentType(String contentType, boolean allowBinary) {
        if (contentType == null || contentType.isBlank() || contentType.equalsIgnoreCase(MediaType.APPLICATION_JSON)) {
            return; // the common case, without parsing a MediaType per request
        }
        MediaType type;
        try {
            type = MediaType.valueOf(contentType);
        } catch (IllegalArgumentException e) {
            throw new ApiError(415, "Content-Type '" + contentType + "' is not a media type");
        }
        boolean json = type.isCompatible(MediaType.APPLICATION_JSON_TYPE) && !type.isWildcardType()
                && !type.isWildcardSubtype();
        boolean binary = allowBinary && type.isCompatible(MediaType.APPLICATION_OCTET_STREAM_TYPE)
                && !type.isWildcardType() && !type.isWildcardSubtype();
        if (!json && !binary) {
            throw new ApiError(415, "unsupported Content-Type '" + contentType + "'; send application/json"
                    + (allowBinary ? " (or application/octet-stream with Inference-Header-Content-Length)" : ""));
        }
    }
}
