package dev.serval.request;

import dev.serval.error.InvalidInput;
import dev.serval.tensor.Tensors;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The tensor mapping of the composite kinds (pipeline, java): a whole request is one {@link Invocation}, carrying the
 * request's {@link CallContext}, and the answer is one set of tensors. The request's future ends the invocation
 * ({@link #watch}), which cancels the calls it started.
 */
public final class InvocationIO implements TensorIO<Invocation, Tensors> {

    private static final InvocationIO INSTANCE = new InvocationIO();

    private InvocationIO() {
    }

    public static InvocationIO instance() {
        return INSTANCE;
    }

    @Override
    public List<Invocation> inputs(Tensors request) {
        return inputs(InferenceRequest.of(request));
    }

    @Override
    public List<Invocation> inputs(InferenceRequest request) {
        if (request.inputs().size() == 0) {
            throw new InvalidInput("inputs", "'inputs' is empty; send at least one input tensor");
        }
        return List.of(new Invocation(request.inputs(), request.context()));
    }

    @Override
    public void watch(List<Invocation> inputs, CompletableFuture<?> answer) {
        Invocation invocation = inputs.getFirst();
        answer.whenComplete((ignored, failure) -> invocation.end());
    }

    @Override
    public Tensors outputs(List<Tensors> outputs) {
        return outputs.getFirst();
    }
}
