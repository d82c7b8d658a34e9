package dev.serval.request;

import dev.serval.error.InvalidInput;
import dev.serval.tensor.Tensors;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How a model kind maps a request's Open Inference Protocol tensors to the inputs its predictors take, and its outputs
 * back. A text model takes one {@code BYTES [n]} tensor as n inputs; a tensor model takes a whole request as one input.
 * Runs on request threads (the event loop): cheap, allocation-light, never blocking. Thread-safe.
 *
 * @param <I> the model's input type
 * @param <O> the model's output type
 */
public interface TensorIO<I, O> {

    /**
     * The inputs made of a request's tensors.
     *
     * @throws InvalidInput naming the tensor and field when the request does not fit the model (unknown or missing
     *                      tensor, wrong datatype, wrong shape)
     */
    List<I> inputs(Tensors request);

    /**
     * The inputs of {@code request}. Only the kinds that call other deployments keep its {@link CallContext}, to pass
     * on ({@link InvocationIO}); by default, {@link #inputs(Tensors)} of its tensors.
     *
     * @throws InvalidInput as {@link #inputs(Tensors)}
     */
    default List<I> inputs(InferenceRequest request) {
        return inputs(request.inputs());
    }

    /**
     * Tells {@code inputs} (made by this mapping) when their request is over: {@code answer} is the request's future.
     * By default nothing: only inputs that start calls of their own need to know ({@link Invocation#end}).
     */
    default void watch(List<I> inputs, CompletableFuture<?> answer) {
    }

    /** The output tensors for one request's outputs, in the order of {@code inputs}. */
    Tensors outputs(List<O> outputs);
}
