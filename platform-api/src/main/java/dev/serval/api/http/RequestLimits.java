package dev.serval.api.http;

import dev.serval.api.config.ServalConfig;
import dev.serval.error.InvalidInput;

/**
 * The bounds on what one inference request may declare, checked by the decoders before anything is allocated from a
 * client's count, shape or length (see docs/api.md, "Limits"). The body itself is bounded by
 * {@code serval.http.max-body-size}; these bound what a small body could otherwise make the server allocate or loop
 * over.
 *
 * @param maxTensors        inputs, and outputs asked for, per OIP request ({@code serval.http.max-tensors-per-request})
 * @param maxTensorElements elements one input tensor's shape may declare ({@code serval.http.max-tensor-elements})
 * @param maxTexts          texts per OpenAI embeddings request ({@code serval.http.max-texts-per-request})
 */
public record RequestLimits(int maxTensors, long maxTensorElements, int maxTexts) {

    /** Dimensions a shape may have. */
    public static final int MAX_RANK = 32;

    public RequestLimits {
        if (maxTensors < 1 || maxTensorElements < 1 || maxTexts < 1) {
            throw new IllegalArgumentException("request limits must be positive: " + maxTensors + ", "
                    + maxTensorElements + ", " + maxTexts);
        }
        // An array holds at most Integer.MAX_VALUE - 8 elements on HotSpot.
        maxTensorElements = Math.min(maxTensorElements, Integer.MAX_VALUE - 8);
    }

    public static RequestLimits of(ServalConfig.Http http) {
        return new RequestLimits(http.maxTensorsPerRequest(), http.maxTensorElements(), http.maxTextsPerRequest());
    }

    /** Limits for tests and tools: the documented defaults. */
    public static RequestLimits defaults() {
        return new RequestLimits(64, 16L << 20, 2048);
    }

    /** Throws when {@code count} tensors (called {@code what}, at {@code field}) are over the limit. */
    public void checkTensorCount(int count, String what, String field) {
        if (count > maxTensors) {
            throw new InvalidInput(field, "the request has " + count + " " + what + "; at most " + maxTensors
                    + " are allowed (serval.http.max-tensors-per-request)");
        }
    }
}
