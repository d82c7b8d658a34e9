package dev.serval.request;

import dev.serval.tensor.Tensors;
import java.util.List;
import java.util.Objects;

/**
 * One inference request as the engine takes it ({@code Deployment.infer}), whoever made it: the REST and gRPC edges
 * decode it, a composite model's call builds it with its caller's context. Immutable.
 *
 * @param inputs  the request's named tensors
 * @param outputs the names of the outputs wanted, in the order wanted (a name may appear twice); null for every
 *                output of the model
 * @param context who the request is and until when it may run: the engine drops it, never reaching the model, when
 *                its deadline passes while it waits
 */
public record InferenceRequest(Tensors inputs, List<String> outputs, CallContext context) {

    public InferenceRequest {
        Objects.requireNonNull(inputs, "inputs");
        Objects.requireNonNull(context, "context");
        outputs = outputs == null ? null : List.copyOf(outputs);
    }

    /** A request for every output, without id or deadline (direct callers: benchmarks, tests). */
    public static InferenceRequest of(Tensors inputs) {
        return new InferenceRequest(inputs, null, CallContext.NONE);
    }
}
