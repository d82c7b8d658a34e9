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
 */
public record AdmissionSpec(int maxOngoingRequests, int maxQueuedRequests, int maxInputsPerRequest,
        Duration requestTimeout) {

    /*
     * The counts are bounded wider than a config may ask (100,000, the edge's bound): the engine must stay correct
     * where slots x inputs per request passes the int range, and DeploymentTest proves it with 1,000,000 of each.
     */
    public static final IntRange MAX_ONGOING_REQUESTS = new IntRange("max_ongoing_requests", 1, 1_000_000);
    public static final IntRange MAX_QUEUED_REQUESTS = new IntRange("max_queued_requests", 0, 1_000_000);
    public static final IntRange MAX_INPUTS_PER_REQUEST = new IntRange("max_inputs_per_request", 1, 1_000_000);
    public static final DurationRange REQUEST_TIMEOUT = new DurationRange("request_timeout", Duration.ofMillis(1),
            Duration.ofHours(1));

    public static final AdmissionSpec DEFAULTS = new AdmissionSpec(8, 256, 256, Duration.ofSeconds(30));

    public AdmissionSpec {
        MAX_ONGOING_REQUESTS.check(maxOngoingRequests);
        MAX_QUEUED_REQUESTS.check(maxQueuedRequests);
        MAX_INPUTS_PER_REQUEST.check(maxInputsPerRequest);
        REQUEST_TIMEOUT.check(requestTimeout);
    }

    public AdmissionSpec withMaxOngoingRequests(int ongoing) {
        return ongoing == maxOngoingRequests ? this
                : new AdmissionSpec(ongoing, maxQueuedRequests, maxInputsPerRequest, requestTimeout);
    }

    public AdmissionSpec withMaxQueuedRequests(int queued) {
        return queued == maxQueuedRequests ? this
                : new AdmissionSpec(maxOngoingRequests, queued, maxInputsPerRequest, requestTimeout);
    }

    public AdmissionSpec withMaxInputsPerRequest(int inputs) {
        return inputs == maxInputsPerRequest ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, inputs, requestTimeout);
    }

    public AdmissionSpec withRequestTimeout(Duration timeout) {
        return Objects.equals(timeout, requestTimeout) ? this
                : new AdmissionSpec(maxOngoingRequests, maxQueuedRequests, maxInputsPerRequest, timeout);
    }
}
