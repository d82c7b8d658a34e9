package dev.serval.api.http;

import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * A decoded Open Inference Protocol inference request.
 *
 * @param id            the request id to echo, or null
 * @param inputs        the input tensors, in request order
 * @param binaryOutput  {@code parameters.binary_data_output}: outputs not listed in {@code outputs} go in the binary
 *                      section
 * @param outputs       the outputs the client asked for, in order, or null for every output of the model
 * @param timeoutMicros the request's own timeout from {@code parameters.timeout} (microseconds, as Triton), or -1
 */
record OipRequest(String id, Tensors inputs, boolean binaryOutput, List<Output> outputs, long timeoutMicros) {

    /** One requested output: its name and whether it goes in the binary section. */
    record Output(String name, boolean binary) {
    }
}
