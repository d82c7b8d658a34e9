package dev.serval.spec;

import java.time.Duration;
import java.util.Objects;

/**
 * How much work a deployment takes in, and for how long. Every bound is finite, so a deployment never queues or waits
 * without limit.
 *
 * @param maxOngoingRequests  requests one replica works on at once (admitted by CAS); default 8
 * @param maxQueuedRequests   requests the deployment holds while every replica is full; past it, requests are refused
 *                            with {@code Overloaded}; default 256
 * @param maxInputsPerRequest inputs one request may carry; default 256
 * @param requestTimeout      how long a request may take end to end before it fails and its unstarted work is dropped
 *                            (a client may ask for less); default 30 s
 * @param maxTokensPerRequest tokens one request of a text model may make the model read, summed over its inputs (a
 *                            text's tokens as the model reads them: at most {@code max_length} when truncated, every
 *                            window's when chunked); a request past it fails with {@code InvalidInput} and its work
 *                            not yet run is dropped. Default {@value #DEFAULT_MAX_TOKENS_PER_REQUEST}: the largest
 *                            request the other defaults allow fits (256 inputs of 256 tokens, 65,536; a rerank request
 *                            of 1,000 documents of 256, 256,000), and it is about one {@code request_timeout} of one
 *                            core's work on all-MiniLM-L6-v2 (docs/security.md)
 */
public record AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
        Duration requestTimeout, int maxTokensPerRequest) {

    /*
     * The counts are bounded wider than a config may ask (100,000, the edge's bound): the engine must stay correct
     * where slots x inputs per request passes the int range, and DeploymentTest proves it with 1,000,000 of each.
     */
    public static final IntRange MAX_ONGOING_REQUESTS = new IntRange("max_ongoing_requests", 1, 1_000_000);
    public static final IntRange MAX_QUEUED_REQUESTS = new IntRange("max_queued_requests", 0, 1_000_000);
    public static final IntRange MAX_INPUTS_PER_REQUEST = new IntRange("max_inputs_per_request", 1, 1_000_000);
    public static final DurationRange REQUEST_TIMEOUT = new DurationRange("request_timeout", Duration.ofMillis(1),
            Duration.ofHours(1));

    public static final IntRange MAX_TOKENS_PER_REQUEST = new IntRange("max_tokens_per_request", 1, 1_000_000_000);
    public static final int DEFAULT_MAX_TOKENS_PER_REQUEST = 262_144;

    public static final AdmissionSpec DEFAULTS = new AdmissionSpec(8, 256, 256, Duration.ofSeconds(30));

    public AdmissionSpec {
        MAX_ONGOING_REQUESTS.check(maxOngoingRequests);
        MAX_QUEUED_REQUESTS.check(maxQueuedRequests);
        MAX_INPUTS_PER_REQUEST.check(maxInputsPerRequest);
        REQUEST_TIMEOUT.check(requestTimeout);
        MAX_TOKENS_PER_REQUEST.check(maxTokensPerRequest);
    }

    /** With the default {@code max_tokens_per_request}. */
    public AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
            Duration requestTimeout) {
        this(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout,
                DEFAULT_MAX_TOKENS_PER_REQUEST);
    }

    public AdmissionSpec withMaxOngoingRequests(int ongoing) {
        return ongoing == maxOngoingRequests ? this
                : new AdmissionSpec(ongoing, maxQueuedRequests, maxInputsPerRequest, requestTimeout,
                        maxTokensPerRequest);
    }

    public AdmissionSpec withMaxQueuedRequests(int queued) {
        return queued == maxQueuedRequests ? this
                : new AdmissionSpec(maxOngoingRequests, queued, maxInputsPerRequest, requestTimeout,
                        maxTokensPerRequest);
    }

    public AdmissionSpec withMaxInputsPerRequest(int inputs) {
        return inputs == maxInputsPerRequest ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, inputs, requestTimeout,
                        maxTokensPerRequest);
    }

    public AdmissionSpec withRequestTimeout(Duration timeout) {
        return Objects.equals(timeout, requestTimeout) ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, timeout,
                        maxTokensPerRequest);
    }

    public AdmissionSpec withMaxTokensPerRequest(int tokens) {
        return tokens == maxTokensPerRequest ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout, tokens);
    }
}
