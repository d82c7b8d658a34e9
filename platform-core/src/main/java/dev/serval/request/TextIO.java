package dev.serval.request;

import dev.serval.error.InvalidInput;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.Arrays;
import java.util.List;

/**
 * The input side of text models: one tensor named {@code text}, datatype {@code BYTES}, shape {@code [n]} or
 * {@code [n, 1]}, whose n strings are the model's n inputs.
 */
public final class TextIO {

    /** The name of a text model's input tensor. */
    public static final String INPUT = "text";

    private TextIO() {
    }

    /**
     * The texts of a request to a text model.
     *
     * @throws InvalidInput naming the field when the request is not one {@code text} tensor of BYTES {@code [n]}
     */
    public static List<String> texts(Tensors request) {
        if (request.size() != 1) {
            throw new InvalidInput("inputs", "'inputs' must hold exactly one input, '" + INPUT + "'; it holds "
                    + request.size());
        }
        Tensor input = request.tensors().getFirst();
        if (!input.name().equals(INPUT)) {
            throw new InvalidInput("inputs[0].name", "unknown input '" + input.name()
                    + "'; this model takes one input, '" + INPUT + "'");
        }
        if (input.datatype() != DataType.BYTES) {
            throw new InvalidInput("inputs[0].datatype", "input '" + INPUT + "' has datatype " + input.datatype()
                    + "; this model takes BYTES");
        }
        long[] shape = input.shape();
        boolean vector = shape.length == 1;
        boolean column = shape.length == 2 && shape[1] == 1;
        if (!vector && !column) {
            throw new InvalidInput("inputs[0].shape", "input '" + INPUT + "' has shape " + Arrays.toString(shape)
                    + "; this model takes [n] (or [n, 1])");
        }
        String[] texts = (String[]) input.data();
        if (texts.length == 0) {
            throw new InvalidInput("inputs[0].data", "input '" + INPUT + "' is empty; send at least one text");
        }
        return Arrays.asList(texts);
    }
}
