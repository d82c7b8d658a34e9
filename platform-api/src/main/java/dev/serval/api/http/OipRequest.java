package dev.serval.api.http;

import java.util.List;

/**
 * A decoded Open Inference Protocol request to a text-embedding deployment.
 *
 * @param id           the request id to echo, or null
 * @param texts        the input texts, in order
 * @param binaryOutput whether the {@code embedding} output goes in the binary section
 * @param timeoutMicros the request's own timeout from {@code parameters.timeout} (microseconds, as Triton), or -1
 */
record OipRequest(String id, List<String> texts, boolean binaryOutput, long timeoutMicros) {
}
