package dev.serval.model.onnx;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslatorContext;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.ArrayList;
import java.util.List;

/**
 * A whole request's tensors to the ONNX graph's inputs, by name, and every graph output back to a tensor under its
 * graph name, in graph order. Elements are copied once each way; FP32, FP64, INT32, INT64 and BOOL map to DJL's
 * FLOAT32, FLOAT64, INT32, INT64 and BOOLEAN. The request must already be valid for the model
 * ({@link TensorModel#validate}). Stateless.
 */
final class TensorTranslator implements NoBatchifyTranslator<Tensors, Tensors> {

    private final List<String> inputs;
    private final List<String> outputs;

    /**
     * @param inputs  the graph's input names: a request must hold exactly these
     * @param outputs the graph's output names, in the order answers list them
     */
    TensorTranslator(List<String> inputs, List<String> outputs) {
        this.inputs = List.copyOf(inputs);
        this.outputs = List.copyOf(outputs);
    }

    @Override
    public NDList processInput(TranslatorContext ctx, Tensors request) {
        NDManager manager = ctx.getNDManager();
        NDList list = new NDList(inputs.size());
        for (String name : inputs) {
            Tensor tensor = request.get(name).orElseThrow(
                    () -> new IllegalArgumentException("the request has no tensor '" + name + "'"));
            list.add(toArray(manager, tensor));
        }
        return list;
    }

    @Override
    public Tensors processOutput(TranslatorContext ctx, NDList list) {
        List<Tensor> tensors = new ArrayList<>(outputs.size());
        for (int i = 0; i < outputs.size(); i++) {
            String name = outputs.get(i);
            NDArray array = list.get(name);
            if (array == null) {
                if (list.size() != outputs.size()) {
                    throw new IllegalStateException("the model returned " + list.size() + " outputs, not the "
                            + outputs.size() + " its graph declares " + outputs);
                }
                array = list.get(i);
            }
            tensors.add(toTensor(name, array));
        }
        return new Tensors(tensors);
    }

    /** A DJL array holding {@code tensor}'s elements and shape, named after it. */
    static NDArray toArray(NDManager manager, Tensor tensor) {
        Shape shape = new Shape(tensor.shape());
        NDArray array = switch (tensor.datatype()) {
            case FP32 -> manager.create((float[]) tensor.data(), shape);
            case FP64 -> manager.create((double[]) tensor.data(), shape);
            case INT32 -> manager.create((int[]) tensor.data(), shape);
            case INT64 -> manager.create((long[]) tensor.data(), shape);
            case BOOL -> manager.create((boolean[]) tensor.data(), shape);
            case BYTES -> throw new IllegalArgumentException("tensor '" + tensor.name() + "' is BYTES, which an ONNX"
                    + " tensor model does not take");
        };
        array.setName(tensor.name());
        return array;
    }

    /** {@code array}'s elements and shape as a tensor called {@code name}. */
    static Tensor toTensor(String name, NDArray array) {
        long[] shape = array.getShape().getShape();
        return switch (array.getDataType()) {
            case FLOAT32 -> new Tensor(name, DataType.FP32, shape, array.toFloatArray());
            case FLOAT64 -> new Tensor(name, DataType.FP64, shape, array.toDoubleArray());
            case INT32 -> new Tensor(name, DataType.INT32, shape, array.toIntArray());
            case INT64 -> new Tensor(name, DataType.INT64, shape, array.toLongArray());
            case BOOLEAN -> new Tensor(name, DataType.BOOL, shape, array.toBooleanArray());
            default -> throw new IllegalStateException("output '" + name + "' is " + array.getDataType()
                    + ", which Serval does not carry");
        };
    }
}
