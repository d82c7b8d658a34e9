package dev.serval.api.http;

import dev.serval.api.serving.RequestMeters;

/**
 * The HTTP dialects Serval speaks on one port. Each names the {@code api} tag of its requests' meters and the shape of
 * its error answers ({@link ErrorResponses.Failure#of}): the Open Inference Protocol's {@code {"error": "..."}} (also
 * everything that is no inference dialect: management, metadata, health), OpenAI's nested error object, Hugging Face
 * TEI's {@code {"error", "error_type"}}, and the Jina/Cohere rerank shape {@code {"message"}}.
 */
enum Dialect {
    OIP(RequestMeters.Api.OIP),
    OPENAI(RequestMeters.Api.OPENAI),
    TEI(RequestMeters.Api.TEI),
    RERANK(RequestMeters.Api.RERANK);

    private final RequestMeters.Api api;

    Dialect(RequestMeters.Api api) {
        this.api = api;
    }

    RequestMeters.Api api() {
        return api;
    }

    /** The dialect of a request path, for answers written before (or outside) an endpoint's own handler. */
    static Dialect ofPath(String path) {
        if (path.equals("/v1/rerank") || path.equals("/v2/rerank")) {
            return RERANK;
        }
        if (path.startsWith("/v1/") || path.equals("/v1")) {
            return OPENAI;
        }
        if (TeiRoutes.isTeiPath(path)) {
            return TEI;
        }
        return OIP;
    }
}
