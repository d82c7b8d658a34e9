package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.api.serving.Outcome;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import java.time.Duration;
import io.vertx.grpc.common.GrpcStatus;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** {@link ErrorResponses}: the one table from engine errors to REST statuses, gRPC statuses and request outcomes. */
class ErrorResponsesTest {

    /**
     * The engine's own deadline refusal (a request it dropped unrun, past its deadline, from its queue or a replica's)
     * is answered as the edge's timer answers one: 504 on both REST dialects, DEADLINE_EXCEEDED over gRPC, metered as
     * {@code expired}; also when it comes wrapped, as a future's failure does.
     */
    @Test
    void anEngineDeadlineRefusalIsAnsweredAndMeteredAsTheEdgesTimeout() {
        DeadlineExceeded dropped = new DeadlineExceeded("the request's deadline passed while it waited in the queue "
                + "of model 'm'; it was not run");
        CompletionException wrapped = new CompletionException(dropped);

        ErrorResponses.Failure oip = ErrorResponses.Failure.oip(wrapped);
        ErrorResponses.Failure openAi = ErrorResponses.Failure.openAi(wrapped);

        assertEquals(504, oip.status());
        assertEquals(Map.of("error", dropped.getMessage()), oip.body());
        assertEquals(Map.of(), oip.retryAfter(), "no Retry-After: the client's deadline, not the server's load");
        assertEquals(504, openAi.status());
        assertEquals("timeout", ((Map<?, ?>) openAi.body().get("error")).get("code"));
        assertEquals(GrpcStatus.DEADLINE_EXCEEDED, ErrorResponses.grpcStatus(wrapped));
        assertEquals(Outcome.EXPIRED, ErrorResponses.outcome(wrapped));
        assertEquals(ErrorResponses.outcome(new DeadlineExceeded("the request's deadline of 5 ms passed before the "
                + "model answered")), ErrorResponses.outcome(dropped), "the edge's timer's outcome");
    }

    /**
     * A refusal for load asks the client to come back after the overload's own estimate on both transports (REST's
     * Retry-After, gRPC's RetryInfo read the one rule), also when it comes wrapped, as a future's failure does; a
     * deployment not ready asks for a second; a client's own mistake asks for nothing.
     */
    @Test
    void everyTransportReadsTheRetryDelayOfARefusalFromOneRuleEvenWrapped() {
        Overloaded full = new Overloaded("model 'm' has 16 requests queued (max_queued_requests)", Duration.ofMillis(250));

        assertEquals(250, ErrorResponses.retryMillis(full));
        assertEquals(250, ErrorResponses.retryMillis(new CompletionException(full)), "the wrapped overload's delay");
        assertEquals(1000, ErrorResponses.retryMillis(new CompletionException(new NotReady("model 'm' is loading"))));
        assertEquals(-1, ErrorResponses.retryMillis(new DeadlineExceeded("the request's deadline passed")));
        assertEquals("250", ErrorResponses.Failure.oip(new CompletionException(full)).retryAfter()
                .get(ErrorResponses.RETRY_AFTER_MS));
    }
}
