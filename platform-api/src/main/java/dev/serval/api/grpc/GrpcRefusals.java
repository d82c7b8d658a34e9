package dev.serval.api.grpc;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.rpc.RetryInfo;
import dev.serval.api.http.ByteBudget;
import dev.serval.api.http.ErrorResponses;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.server.GrpcServerResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.jboss.logging.Logger;

/**
 * How a gRPC call ends in error. After its message was read: the status the one error table gives
 * ({@code ErrorResponses.grpcStatus}) with its message, and for an overload the retry delay as a
 * {@code google.rpc.RetryInfo} and {@code retry-after-ms}. Before (on its headers or its bytes,
 * {@link GrpcBytesInTransit}): a refusal naming the limit it hit. Holds nothing but those limits; runs on the call's
 * event loop.
 */
final class GrpcRefusals {

    private static final Logger LOG = Logger.getLogger(GrpcRefusals.class);
    static final String GRPC = "application/grpc";
    /** The trailer where gRPC clients find a status's details (a {@code google.rpc.Status}, base64). */
    private static final String STATUS_DETAILS = "grpc-status-details-bin";
    /** HTTP/2's ENHANCE_YOUR_CALM error code, for a stream refused at the edge after its answers started. */
    private static final long ENHANCE_YOUR_CALM = 0xb;

    private final ByteBudget budget;
    private final GrpcConnectionShare.Table connections;
    private final long maxMessageSize;
    private final long bodyTimeoutMillis;

    GrpcRefusals(ByteBudget budget, GrpcConnectionShare.Table connections, long maxMessageSize, long bodyTimeoutMillis) {
        this.budget = budget;
        this.connections = connections;
        this.maxMessageSize = maxMessageSize;
        this.bodyTimeoutMillis = bodyTimeoutMillis;
    }

    /** Ends the call with the status {@code failure} maps to, its message, and for an overload the retry delay. */
    static void fail(GrpcServerResponse<?, ?> response, Throwable failure) {
        GrpcStatus status = ErrorResponses.grpcStatus(failure);
        String message = ErrorResponses.message(failure);
        response.status(status).statusMessage(message);
        long retryMillis = ErrorResponses.retryMillis(failure);
        if (retryMillis >= 0) {
            response.trailers().set(STATUS_DETAILS, retryDetails(status, message, retryMillis));
            response.trailers().set(ErrorResponses.RETRY_AFTER_MS, Long.toString(retryMillis));
        }
        if (status == GrpcStatus.INTERNAL) {
            LOG.debugf("gRPC call failed: %s", failure.toString());
        }
        response.end();
    }

    /** {@code grpc-status-details-bin}: a {@code google.rpc.Status} with a {@code RetryInfo} of {@code retryMillis}. */
    private static String retryDetails(GrpcStatus status, String message, long retryMillis) {
        com.google.rpc.Status details = com.google.rpc.Status.newBuilder().setCode(status.code).setMessage(message)
                .addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(Duration.newBuilder()
                        .setSeconds(retryMillis / 1000).setNanos((int) (retryMillis % 1000) * 1_000_000)).build()))
                .build();
        return Base64.getEncoder().withoutPadding().encodeToString(details.toByteArray());
    }

    /**
     * Refuses a call at the edge, before the gRPC layer has its message ({@link GrpcBytesInTransit}): its bytes do not
     * fit the server's budget (UNAVAILABLE with a retry delay, as {@link #fail} writes it; REST answers 503 +
     * Retry-After), its connection has {@code serval.grpc.max-calls-per-connection} calls open or its bytes do not fit
     * the connection's {@code serval.grpc.max-bytes-per-connection} (RESOURCE_EXHAUSTED), a message is longer than
     * {@code serval.http.max-body-size} (RESOURCE_EXHAUSTED), a message stalled past {@code serval.http.body-timeout}
     * or a unary call did not end its stream within it (DEADLINE_EXCEEDED; REST answers 408), or a message is
     * compressed (UNIMPLEMENTED with {@code grpc-accept-encoding: identity}, as the gRPC spec answers an encoding the
     * server does not take). A stream whose answers already started is reset instead (ENHANCE_YOUR_CALM, which clients
     * report as RESOURCE_EXHAUSTED).
     */
    void refuse(HttpServerRequest request, GrpcBytesInTransit.Refusal refusal) {
        HttpServerResponse response = request.response();
        if (response.ended() || response.closed()) {
            return;
        }
        if (response.headWritten()) {
            response.reset(ENHANCE_YOUR_CALM);
            return;
        }
        response.putHeader(HttpHeaders.CONTENT_TYPE, GRPC);
        switch (refusal) {
            case OVER_BUDGET -> {
                String message = budget.full().getMessage();
                response.putHeader("grpc-status", Integer.toString(GrpcStatus.UNAVAILABLE.code))
                        .putHeader("grpc-message", percentEncoded(message))
                        .putHeader(STATUS_DETAILS, retryDetails(GrpcStatus.UNAVAILABLE, message, 1000))
                        .putHeader(ErrorResponses.RETRY_AFTER_MS, "1000");
            }
            case CONNECTION_CALLS -> response.putHeader("grpc-status",
                            Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("this connection has " + connections.maxCalls()
                            + " gRPC calls open, its limit (serval.grpc.max-calls-per-connection); wait for one to "
                            + "end, or open another connection"));
            case CONNECTION_BYTES -> response.putHeader("grpc-status",
                            Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("the call's bytes do not fit its connection's "
                            + "share: one connection's gRPC calls may hold at most " + connections.maxBytes()
                            + " bytes of requests (serval.grpc.max-bytes-per-connection); wait for its calls to end, "
                            + "or open another connection"));
            case TOO_LARGE -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.RESOURCE_EXHAUSTED.code))
                    .putHeader("grpc-message", percentEncoded("a message is longer than serval.http.max-body-size ("
                            + maxMessageSize + " bytes)"));
            case STALLED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.DEADLINE_EXCEEDED.code))
                    .putHeader("grpc-message", percentEncoded("a message did not all arrive within "
                            + "serval.http.body-timeout (" + bodyTimeoutMillis + " ms): of a unary call's "
                            + "headers, or of a stream message's first bytes"));
            case UNENDED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.DEADLINE_EXCEEDED.code))
                    .putHeader("grpc-message", percentEncoded("the call's message arrived, but the client did not end "
                            + "its stream (half-close) within serval.http.body-timeout (" + bodyTimeoutMillis
                            + " ms) of the call's headers; a unary call is answered once its client ends its stream"));
            case COMPRESSED -> response.putHeader("grpc-status", Integer.toString(GrpcStatus.UNIMPLEMENTED.code))
                    .putHeader("grpc-message", percentEncoded("compressed messages are not accepted (grpc-encoding "
                            + "identity only): what a message inflates to cannot be bounded before it is inflated; "
                            + "send it uncompressed"))
                    .putHeader("grpc-accept-encoding", "identity");
        }
        response.end();
    }

    /** {@code grpc-message}'s encoding: printable ASCII but {@code %} as is, everything else percent-encoded (UTF-8). */
    static String percentEncoded(String message) {
        StringBuilder encoded = new StringBuilder(message.length());
        for (byte b : message.getBytes(StandardCharsets.UTF_8)) {
            if (b >= 0x20 && b <= 0x7e && b != '%') {
                encoded.append((char) b);
            } else {
                encoded.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
                        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
            }
        }
        return encoded.toString();
    }
}
