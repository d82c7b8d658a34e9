package dev.serval.api.http;

import dev.serval.api.config.InvalidConfig;
import dev.serval.api.serving.Conflict;
import dev.serval.api.serving.Outcome;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.error.ServalException;
import dev.serval.error.UnknownDeployment;
import io.vertx.grpc.common.GrpcStatus;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

/**
 * The one place where failures become answers: HTTP statuses and bodies in each {@link Dialect}, gRPC statuses
 * ({@link #grpcStatus}) and the request outcomes of the meters ({@link #outcome}). Status codes: InvalidInput 400
 * (TEI: 422, as TEI answers a validation error), UnknownDeployment 404, Overloaded 503 + Retry-After (OpenAI, TEI and
 * rerank: 429 + Retry-After, as their clients expect for back-off), NotReady 503, Conflict 409, DeadlineExceeded 504,
 * InferenceFailed and anything unexpected 500 (TEI: 424, its "backend" error), ApiError and JAX-RS errors their own
 * status. Bodies: {@code {"error": "..."}} for the Open Inference Protocol and everything else, OpenAI's
 * {@code {"error": {"message", "type", "param", "code"}}} under {@code /v1/}, TEI's
 * {@code {"error", "error_type"}} on its routes, {@code {"message"}} on the rerank routes.
 */
public final class ErrorResponses {

    private static final Logger LOG = Logger.getLogger(ErrorResponses.class);

    private ErrorResponses() {
    }

    /** The JAX-RS answer for {@code failure} on {@code path}, in that path's dialect. */
    static Response forPath(String path, Throwable failure) {
        Failure error = Failure.of(Dialect.ofPath(path), failure);
        Response.ResponseBuilder response = Response.status(error.status())
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(error.body());
        error.retryAfter().forEach(response::header);
        return response.build();
    }

    /**
     * A failure as its HTTP answer: status, JSON body (as maps, for any JSON writer) and a {@code Retry-After}
     * header when the client should come back.
     */
    record Failure(int status, Map<String, Object> body, Map<String, String> retryAfter) {

        static Failure of(Dialect dialect, Throwable failure) {
            return switch (dialect) {
                case OIP -> oip(failure);
                case OPENAI -> openAi(failure);
                case TEI -> tei(failure);
                case RERANK -> rerank(failure);
            };
        }

        /** In the Open Inference Protocol's format, {@code {"error": "..."}}. */
        static Failure oip(Throwable failure) {
            Throwable error = unwrap(failure);
            return new Failure(ErrorResponses.status(error, Dialect.OIP), Map.of("error", message(error)),
                    ErrorResponses.retryAfter(error));
        }

        /** In OpenAI's format, {@code {"error": {"message", "type", "param", "code"}}}. */
        static Failure openAi(Throwable failure) {
            Throwable error = unwrap(failure);
            int status = ErrorResponses.status(error, Dialect.OPENAI);
            String type = switch (status) {
                case 429 -> "requests";
                case 500, 503, 504 -> "server_error";
                default -> "invalid_request_error";
            };
            String code = switch (error) {
                case UnknownDeployment ignored -> "model_not_found";
                case Overloaded ignored -> "rate_limit_exceeded";
                case NotReady ignored -> "model_not_ready";
                case DeadlineExceeded ignored -> "timeout";
                default -> status == 413 ? "request_too_large" : null;
            };
            String param = error instanceof InvalidInput invalid ? invalid.field()
                    : error instanceof UnknownDeployment ? "model" : null;
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("message", message(error));
            body.put("type", type);
            body.put("param", param);
            body.put("code", code);
            return new Failure(status, Map.of("error", body), ErrorResponses.retryAfter(error));
        }

        /**
         * In TEI's format, {@code {"error": "...", "error_type": "..."}}, with TEI's types: {@code validation} for the
         * client's mistakes, {@code overloaded} (429), {@code unhealthy} (503: not ready), {@code backend} (the rest).
         */
        static Failure tei(Throwable failure) {
            Throwable error = unwrap(failure);
            int status = ErrorResponses.status(error, Dialect.TEI);
            String type = switch (status) {
                case 429 -> "overloaded";
                case 503 -> "unhealthy";
                default -> status < 500 && status != 424 ? "validation" : "backend";
            };
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("error", message(error));
            body.put("error_type", type);
            return new Failure(status, body, ErrorResponses.retryAfter(error));
        }

        /** In the rerank APIs' format (Cohere's), {@code {"message": "..."}}. */
        static Failure rerank(Throwable failure) {
            Throwable error = unwrap(failure);
            return new Failure(ErrorResponses.status(error, Dialect.RERANK), Map.of("message", message(error)),
                    ErrorResponses.retryAfter(error));
        }
    }

    /**
     * The outcome a request that failed with {@code failure} is metered with. Only {@link Outcome#ERROR} feeds the
     * failure monitor: a refusal for load ({@code Overloaded}, or a 503/429 decided at the edge) is
     * {@link Outcome#REJECTED}, whoever caused it.
     */
    public static Outcome outcome(Throwable failure) {
        return switch (unwrap(failure)) {
            case InvalidInput ignored -> Outcome.BAD_REQUEST;
            case UnknownDeployment ignored -> Outcome.BAD_REQUEST;
            case Overloaded ignored -> Outcome.REJECTED;
            case NotReady ignored -> Outcome.NOT_READY;
            case InferenceFailed ignored -> Outcome.ERROR;
            case DeadlineExceeded ignored -> Outcome.EXPIRED;
            case ApiError error -> switch (error.status()) {
                case 429, 503 -> Outcome.REJECTED;
                default -> error.status() >= 500 ? Outcome.ERROR : Outcome.BAD_REQUEST;
            };
            default -> Outcome.ERROR;
        };
    }

    /**
     * The gRPC status of {@code failure}: its HTTP status as OpenAI's endpoints answer it (a refusal for load 429,
     * not OIP's 503, which gRPC keeps for "not ready"), in gRPC's terms, so that both transports answer from this one
     * table.
     */
    public static GrpcStatus grpcStatus(Throwable failure) {
        return switch (status(unwrap(failure), Dialect.OPENAI)) {
            case 400, 413, 415 -> GrpcStatus.INVALID_ARGUMENT;
            case 401 -> GrpcStatus.UNAUTHENTICATED;
            case 404 -> GrpcStatus.NOT_FOUND;
            case 408, 504 -> GrpcStatus.DEADLINE_EXCEEDED;
            case 409 -> GrpcStatus.FAILED_PRECONDITION;
            case 429 -> GrpcStatus.RESOURCE_EXHAUSTED;
            case 503 -> GrpcStatus.UNAVAILABLE;
            default -> GrpcStatus.INTERNAL;
        };
    }

    private static int status(Throwable error, Dialect dialect) {
        return switch (error) {
            case InvalidInput ignored -> dialect == Dialect.TEI ? 422 : 400;
            case InvalidConfig ignored -> 400;
            case UnknownDeployment ignored -> 404;
            case Conflict ignored -> 409;
            case Overloaded ignored -> dialect == Dialect.OIP ? 503 : 429;
            case NotReady ignored -> 503;
            case InferenceFailed ignored -> dialect == Dialect.TEI ? 424 : 500;
            case DeadlineExceeded ignored -> 504;
            case ApiError api -> api.status();
            case WebApplicationException web -> web.getResponse().getStatus();
            default -> 500;
        };
    }

    public static String message(Throwable error) {
        if (error instanceof InferenceFailed) {
            // The predictor thread logged the model's stack trace; this line ties the failure to the request id.
            LOG.warnf("request failed on the server: %s", error.getMessage());
            return error.getMessage();
        }
        if (error instanceof ServalException || error instanceof ApiError || error instanceof Conflict
                || error instanceof InvalidConfig) {
            return error.getMessage();
        }
        if (error instanceof WebApplicationException web && web.getResponse().getStatus() < 500) {
            return web.getMessage();
        }
        LOG.error("request failed on the server", error);
        Object requestId = MDC.get("requestId");
        return "internal server error: " + error.getClass().getSimpleName()
                + (requestId == null ? "" : " (request id " + requestId + "; the server's log has the details)");
    }

    /** Header with the retry delay in milliseconds, which OpenAI's client libraries read before Retry-After. */
    public static final String RETRY_AFTER_MS = "retry-after-ms";

    /**
     * {@code Retry-After} in whole seconds as HTTP defines it, rounded to the nearest (so a queue that drains in
     * milliseconds says 0: retry now), and the exact delay in {@code retry-after-ms}.
     */
    static Map<String, String> retryAfter(Throwable error) {
        long millis = retryMillis(error);
        return millis < 0 ? Map.of() : retryAfter(millis);
    }

    /**
     * How long a client refused with {@code failure} is asked to wait before it tries again, in milliseconds, or -1
     * when trying again will not help: an overload's own estimate, a second for any other 503 (not ready, the byte
     * budget full). REST sends it as {@code Retry-After}, gRPC as {@code RetryInfo}: one rule for both transports.
     */
    public static long retryMillis(Throwable failure) {
        Throwable error = unwrap(failure);
        if (error instanceof Overloaded overloaded) {
            return overloaded.retryAfter().toMillis();
        }
        return status(error, Dialect.OPENAI) == 503 ? 1000 : -1;
    }

    static Map<String, String> retryAfter(long millis) {
        return Map.of(HttpHeaders.RETRY_AFTER, Long.toString((millis + 500) / 1000), RETRY_AFTER_MS,
                Long.toString(millis));
    }

    public static Throwable unwrap(Throwable failure) {
        Throwable error = failure;
        while ((error instanceof CompletionException || error instanceof ExecutionException)
                && error.getCause() != null) {
            error = error.getCause();
        }
        return error;
    }
}
