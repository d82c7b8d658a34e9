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
 * @param maxPendingTokens    the estimated tokens of every request of a text model the deployment admitted and has not
 *                            answered (queued or running), deployment-wide; the request that would pass it is refused
 *                            at once with {@code Overloaded}, like a full queue. A text is estimated at its code points
 *                            plus 2 ([CLS], [SEP]), at most what the model reads of one text: a WordPiece or BPE token
 *                            spans at least one character, so English (3 to 5 characters per token) is over-counted 3
 *                            to 5 times when shorter than {@code max_length} or chunked, and counted exactly when
 *                            truncated at it. Default {@value #DEFAULT_MAX_PENDING_TOKENS}, four times the default
 *                            {@code max_tokens_per_request}, which holds 16 of the largest default requests (256
 *                            texts of 256 tokens) and is about one {@code request_timeout} of a 2-core pod's work on
 *                            all-MiniLM-L6-v2 (the figures are in docs/security.md)
 */
public record AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
        Duration requestTimeout, int maxTokensPerRequest, int maxPendingTokens) {

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
    public static final IntRange MAX_PENDING_TOKENS = new IntRange("max_pending_tokens", 1, 1_000_000_000);
    public static final int DEFAULT_MAX_PENDING_TOKENS = 4 * DEFAULT_MAX_TOKENS_PER_REQUEST;

    public static final AdmissionSpec DEFAULTS = new AdmissionSpec(8, 256, 256, Duration.ofSeconds(30));

    public AdmissionSpec {
        MAX_ONGOING_REQUESTS.check(maxOngoingRequests);
        MAX_QUEUED_REQUESTS.check(maxQueuedRequests);
        MAX_INPUTS_PER_REQUEST.check(maxInputsPerRequest);
        REQUEST_TIMEOUT.check(requestTimeout);
        MAX_TOKENS_PER_REQUEST.check(maxTokensPerRequest);
        MAX_PENDING_TOKENS.check(maxPendingTokens);
    }

    /** With the default {@code max_tokens_per_request} and {@code max_pending_tokens}. */
    public AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
            Duration requestTimeout) {
        this(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout,
                DEFAULT_MAX_TOKENS_PER_REQUEST);
    }

    /** With the default {@code max_pending_tokens}. */
    public AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
            Duration requestTimeout, int maxTokensPerRequest) {
        this(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout, maxTokensPerRequest,
                DEFAULT_MAX_PENDING_TOKENS);
    }

    public AdmissionSpec withMaxOngoingRequests(int ongoing) {
        return ongoing == maxOngoingRequests ? this
                : new AdmissionSpec(ongoing, maxQueuedRequests, maxInputsPerRequest, requestTimeout,
                        maxTokensPerRequest, maxPendingTokens);
    }

    public AdmissionSpec withMaxQueuedRequests(int queued) {
        return queued == maxQueuedRequests ? this
                : new AdmissionSpec(maxOngoingRequests, queued, maxInputsPerRequest, requestTimeout,
                        maxTokensPerRequest, maxPendingTokens);
    }

    public AdmissionSpec withMaxInputsPerRequest(int inputs) {
        return inputs == maxInputsPerRequest ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, inputs, requestTimeout,
                        maxTokensPerRequest, maxPendingTokens);
    }

    public AdmissionSpec withRequestTimeout(Duration timeout) {
        return Objects.equals(timeout, requestTimeout) ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, timeout,
                        maxTokensPerRequest, maxPendingTokens);
    }

    public AdmissionSpec withMaxTokensPerRequest(int tokens) {
        return tokens == maxTokensPerRequest ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout, tokens,
                        maxPendingTokens);
    }

    public AdmissionSpec withMaxPendingTokens(int tokens) {
        return tokens == maxPendingTokens ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, requestTimeout,
                        maxTokensPerRequest, tokens);
    }
}
