package dev.serval.model.onnx;

import ai.djl.ndarray.NDList;
import dev.serval.error.InvalidInput;
import dev.serval.model.BatchingDecision;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.request.TensorIO;
import dev.serval.request.WholeRequestIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.lang.reflect.Array;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Any ONNX model, run by ONNX Runtime through DJL, in Open Inference Protocol terms: a request's tensors feed the graph
 * inputs of the same names, and the answer holds every graph output under its graph name, in graph order. One request
 * is one input and one inference ({@link WholeRequestIO}); requests are not batched together, since nothing says
 * which dimension of an arbitrary graph is a batch.
 *
 * <p>The signature is read from the graph itself ({@link OnnxGraph#inputsAndOutputs}): names, datatypes (ONNX
 * {@code FLOAT}, {@code DOUBLE}, {@code INT32}, {@code INT64}, {@code BOOL} as OIP {@code FP32}, {@code FP64},
 * {@code INT32}, {@code INT64}, {@code BOOL}) and shapes, {@code -1} for a symbolic or unknown dimension. A graph
 * input or output of any other type is refused at load. An input whose graph declares no shape at all is listed with
 * an empty shape and takes any shape.
 *
 * <p>{@link #validate} refuses, before a request is queued, what ONNX Runtime would refuse or mis-serve: an input the
 * graph does not have, a missing one, another datatype, another rank, another size where the graph fixes one, and
 * different sizes for one symbolic dimension (a {@code batch} shared by two inputs, say).
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
final class TensorModel implements Model<Tensors, Tensors> {

    /**
     * One graph input or output as Serval checks it.
     *
     * @param dims     the sizes, {@code -1} where any size goes
     * @param dimNames each dimension's symbolic name, or empty
     * @param shaped   whether the graph declares a shape (and so a rank)
     */
    record Port(String name, DataType datatype, long[] dims, String[] dimNames, boolean shaped) {

        TensorSignature signature() {
            return new TensorSignature(name, datatype.name(), Arrays.stream(dims).boxed().toList());
        }
    }

    private final OnnxModel model;
    private final List<Port> inputs;
    private final Map<String, Port> inputsByName;
    private final ModelSignature signature;
    private final TensorTranslator translator;
    private final Tensors probe;

    private TensorModel(OnnxModel model, List<Port> inputs, List<Port> outputs) {
        this.model = model;
        this.inputs = List.copyOf(inputs);
        this.inputsByName = new HashMap<>();
        for (Port input : inputs) {
            inputsByName.put(input.name(), input);
        }
        this.signature = new ModelSignature("onnxruntime_onnx", inputs.stream().map(Port::signature).toList(),
                outputs.stream().map(Port::signature).toList());
        this.translator = new TensorTranslator(inputs.stream().map(Port::name).toList(),
                outputs.stream().map(Port::name).toList());
        this.probe = zeros(inputs);
    }

    /**
     * Reads the graph's inputs and outputs, loads the model and runs the probe ({@link #probeInput()}) once.
     *
     * @param modelFile      the ONNX file
     * @param engine         ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for
     *                       none)
     * @param load           the intra-op threads per inference, and of the wide session ({@link OnnxModel})
     * @throws IOException when the file is missing or unreadable, a graph input or output has a datatype Serval does
     *                     not carry, or the probe fails
     */
    static TensorModel load(Path modelFile, OnnxOptions engine, LoadOptions load) throws IOException {
        OnnxGraph.Interface graph = OnnxGraph.inputsAndOutputs(modelFile);
        List<Port> inputs = ports(modelFile, "input", graph.inputs());
        List<Port> outputs = ports(modelFile, "output", graph.outputs());
        if (outputs.isEmpty()) {
            throw new IOException("model " + modelFile + " declares no outputs");
        }
        OnnxModel sessions = OnnxModel.open(modelFile, load, engine);
        TensorModel model = new TensorModel(sessions, inputs, outputs);
        try (Predictor<Tensors, Tensors> predictor = model.newPredictor()) {
            predictor.predict(model.probe);
        } catch (Exception e) {
            sessions.close();
            throw new IOException("model " + modelFile + " failed its first inference, on zeros: " + e.getMessage(), e);
        }
        return model;
    }

    private static List<Port> ports(Path modelFile, String role, List<OnnxGraph.Value> values) throws IOException {
        List<Port> ports = new ArrayList<>(values.size());
        for (OnnxGraph.Value value : values) {
            Optional<DataType> datatype = datatype(value.elementType());
            if (datatype.isEmpty()) {
                throw new IOException("model " + modelFile + ": " + role + " '" + value.name() + "' is "
                        + value.elementTypeName() + "; the tensor kind carries FLOAT, DOUBLE, INT32, INT64 and BOOL");
            }
            ports.add(new Port(value.name(), datatype.get(), value.dims().stream().mapToLong(Long::longValue).toArray(),
                    value.dimNames().toArray(String[]::new), value.shaped()));
        }
        return ports;
    }

    /** The OIP datatype of an ONNX {@code TensorProto.DataType}, when Serval carries it. */
    static Optional<DataType> datatype(int onnxElementType) {
        return switch (onnxElementType) {
            case OnnxGraph.FLOAT -> Optional.of(DataType.FP32);
            case OnnxGraph.DOUBLE -> Optional.of(DataType.FP64);
            case OnnxGraph.INT32 -> Optional.of(DataType.INT32);
            case OnnxGraph.INT64 -> Optional.of(DataType.INT64);
            case OnnxGraph.BOOL -> Optional.of(DataType.BOOL);
            default -> Optional.empty();
        };
    }

    /** A tensor of zeros (false) per input, 1 wherever the size is free. */
    private static Tensors zeros(List<Port> inputs) {
        List<Tensor> tensors = new ArrayList<>(inputs.size());
        for (Port input : inputs) {
            long[] shape = input.shaped() ? input.dims().clone() : new long[] {1};
            for (int d = 0; d < shape.length; d++) {
                shape[d] = shape[d] < 0 ? 1 : shape[d];
            }
            Object data = Array.newInstance(Tensor.arrayClass(input.datatype()).componentType(),
                    Math.toIntExact(Tensor.elementCount(shape)));
            tensors.add(new Tensor(input.name(), input.datatype(), shape, data));
        }
        return new Tensors(tensors);
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }

    @Override
    public TensorIO<Tensors, Tensors> io() {
        return WholeRequestIO.instance();
    }

    @Override
    public BatchingDecision batching() {
        return BatchingDecision.single("a tensor request runs as one inference");
    }

    @Override
    public boolean widens() {
        return model.widens();
    }

    /** {@inheritDoc} Here the request's elements over all of its tensors. */
    @Override
    public long inputSize(Tensors request) {
        long elements = 0;
        for (Tensor tensor : request.tensors()) {
            elements += Tensor.elementCount(tensor.shape());
        }
        return elements;
    }

    @Override
    public Predictor<Tensors, Tensors> newPredictor() {
        OnnxModel.Runner<Tensors, Tensors> predictor = model.newRunner(translator);
        return new Predictor<>() {
            @Override
            public Tensors predict(Tensors input) throws Exception {
                try {
                    return predictor.predict(input);
                } catch (Exception e) {
                    InvalidInput refused = refusedInput(e);
                    if (refused != null) {
                        throw refused;
                    }
                    throw e;
                }
            }

            @Override
            public void widen(boolean wide) {
                predictor.widen(wide);
            }

            @Override
            public void close() {
                predictor.close();
            }
        };
    }

    /**
     * ONNX Runtime's refusal of an input that {@link #validate} let through (the signature takes it, but a node of the
     * graph cannot run it: a Reshape to a size it does not have, say) as the client's error, or null when {@code e} is
     * not one. ONNX Runtime says so with {@code ORT_INVALID_ARGUMENT}, or by failing while running a node; the model
     * itself is checked by its health probe, which runs the probe input, so mapping these to 400 never hides a broken
     * model from the replica's health.
     */
    static InvalidInput refusedInput(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof ai.onnxruntime.OrtException ort) {
                String message = String.valueOf(ort.getMessage());
                boolean refusal = ort.getCode() == ai.onnxruntime.OrtException.OrtErrorCode.ORT_INVALID_ARGUMENT
                        || message.contains("Non-zero status code returned while running");
                if (!refusal) {
                    return null;
                }
                int start = message.indexOf("message: ");
                String said = start >= 0 ? message.substring(start + 9) : message;
                return new InvalidInput("inputs", "the model cannot run this input: "
                        + (said.length() > 500 ? said.substring(0, 500) + "..." : said));
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    /** Zeros (false) of every input's datatype and shape, with 1 for each free dimension. */
    @Override
    public Tensors probeInput() {
        return probe;
    }

    /**
     * Checks a request against the graph's inputs.
     *
     * @param index unused: a tensor request is always the only input of its request; messages name tensors instead
     * @throws InvalidInput with field {@code inputs[i].name}, {@code inputs[i].datatype}, {@code inputs[i].shape} or
     *                      {@code inputs} and a message naming the tensor, what it has and what the model takes
     */
    @Override
    public void validate(Tensors request, int index) {
        Map<String, long[]> symbols = new HashMap<>();
        Map<String, String> symbolSources = new HashMap<>();
        List<Tensor> tensors = request.tensors();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor tensor = tensors.get(i);
            String field = "inputs[" + i + "]";
            Port port = inputsByName.get(tensor.name());
            if (port == null) {
                throw new InvalidInput(field + ".name", "unknown input '" + tensor.name() + "'; this model takes "
                        + names());
            }
            if (tensor.datatype() != port.datatype()) {
                throw new InvalidInput(field + ".datatype", "input '" + tensor.name() + "' has datatype "
                        + tensor.datatype() + "; this model takes " + port.datatype());
            }
            if (!port.shaped()) {
                continue;
            }
            long[] shape = tensor.shape();
            if (shape.length != port.dims().length) {
                throw new InvalidInput(field + ".shape", "input '" + tensor.name() + "' has shape "
                        + Arrays.toString(shape) + " (" + dimensions(shape.length) + "); this model takes "
                        + Arrays.toString(port.dims()) + " (" + dimensions(port.dims().length) + ")");
            }
            for (int d = 0; d < shape.length; d++) {
                long expected = port.dims()[d];
                if (expected >= 0 && shape[d] != expected) {
                    throw new InvalidInput(field + ".shape", "input '" + tensor.name() + "' has shape "
                            + Arrays.toString(shape) + "; dimension " + d + " must be " + expected + " (this model takes "
                            + Arrays.toString(port.dims()) + ")");
                }
                String symbol = port.dimNames()[d];
                if (symbol.isEmpty()) {
                    continue;
                }
                long[] seen = symbols.putIfAbsent(symbol, new long[] {shape[d]});
                if (seen == null) {
                    symbolSources.put(symbol, tensor.name());
                } else if (seen[0] != shape[d]) {
                    throw new InvalidInput(field + ".shape", "input '" + tensor.name() + "' has shape "
                            + Arrays.toString(shape) + "; dimension " + d + " ('" + symbol + "') is " + shape[d]
                            + " but " + seen[0] + " in input '" + symbolSources.get(symbol) + "'");
                }
            }
        }
        for (Port port : inputs) {
            if (request.get(port.name()).isEmpty()) {
                throw new InvalidInput("inputs", "missing input '" + port.name() + "'; this model takes " + names());
            }
        }
    }

    private String names() {
        return inputs.stream().map(port -> "'" + port.name() + "'").collect(Collectors.joining(", "));
    }

    private static String dimensions(int rank) {
        return rank == 1 ? "1 dimension" : rank + " dimensions";
    }

    @Override
    public void close() {
        model.close();
    }
}
