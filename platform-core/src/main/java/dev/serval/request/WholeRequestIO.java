package dev.serval.request;

import dev.serval.error.InvalidInput;
import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * The mapping of models that take a whole request as one input and answer it with one set of output tensors
 * (tensor models, the no-op model): the request is not split into rows.
 */
public final class WholeRequestIO implements TensorIO<Tensors, Tensors> {

    private static final WholeRequestIO INSTANCE = new WholeRequestIO();

    private WholeRequestIO() {
    }

    public static WholeRequestIO instance() {
        return INSTANCE;
    }

    @Override
    public List<Tensors> inputs(Tensors request) {
        if (request.size() == 0) {
            throw new InvalidInput("inputs", "'inputs' is empty; send at least one input tensor");
        }
        return List.of(request);
    }

    @Override
    public Tensors outputs(List<Tensors> outputs) {
        return outputs.getFirst();
    }
}
