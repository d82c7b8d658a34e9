package dev.serval.model.onnx;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads an ONNX model's main graph straight from the protobuf wire format, skipping everything else, weights included,
 * without loading them: its operator types ({@code ModelProto.graph = 7}, {@code GraphProto.node = 1},
 * {@code NodeProto.op_type = 4}) and its declared inputs and outputs ({@code GraphProto.input = 11},
 * {@code output = 12}, each a {@code ValueInfoProto}). Sub-graphs inside control-flow attributes and model-local
 * functions are not read. Not thread-confined; stateless.
 */
public final class OnnxGraph {

    private static final int MODEL_GRAPH = 7;
    private static final int GRAPH_NODE = 1;
    private static final int NODE_OP_TYPE = 4;
    private static final int GRAPH_INITIALIZER = 5;
    private static final int GRAPH_INPUT = 11;
    private static final int GRAPH_OUTPUT = 12;
    private static final int TENSOR_PROTO_NAME = 8;
    private static final int VALUE_NAME = 1;
    private static final int VALUE_TYPE = 2;
    private static final int TYPE_TENSOR = 1;
    private static final int TENSOR_ELEM_TYPE = 1;
    private static final int TENSOR_SHAPE = 2;
    private static final int SHAPE_DIM = 1;
    private static final int DIM_VALUE = 1;
    private static final int DIM_PARAM = 2;

    /** {@code TensorProto.DataType} numbers of the element types Serval carries. */
    static final int FLOAT = 1;
    static final int INT32 = 6;
    static final int INT64 = 7;
    static final int BOOL = 9;
    static final int DOUBLE = 11;

    private static final String[] ELEMENT_TYPE_NAMES = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16",
        "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128",
        "BFLOAT16"};

    /**
     * One declared input or output of the main graph.
     *
     * @param name        the tensor name
     * @param elementType the {@code TensorProto.DataType} number; 0 when the value is not a dense tensor (a sequence,
     *                    a map, an optional, a sparse tensor) or declares no element type
     * @param dims        the dimensions, {@code -1} where the size is symbolic or unknown; empty when no shape is
     *                    declared (see {@code shaped})
     * @param dimNames    the symbolic name of each dimension ({@code dim_param}, for example {@code batch}), or the
     *                    empty string for a fixed or anonymous one
     * @param shaped      whether the graph declares a shape, and so a rank
     */
    public record Value(String name, int elementType, List<Long> dims, List<String> dimNames, boolean shaped) {

        public Value {
            dims = List.copyOf(dims);
            dimNames = List.copyOf(dimNames);
        }

        /** The element type's ONNX name, for messages: {@code FLOAT}, {@code UINT8}... */
        public String elementTypeName() {
            return elementType > 0 && elementType < ELEMENT_TYPE_NAMES.length ? ELEMENT_TYPE_NAMES[elementType]
                    : elementType == 0 ? "not a tensor" : "type " + elementType;
        }
    }

    /**
     * The main graph's inputs a caller must feed, in graph order (inputs that are also initializers, which older
     * exporters list as inputs, are left out), and its outputs.
     */
    public record Interface(List<Value> inputs, List<Value> outputs) {

        public Interface {
            inputs = List.copyOf(inputs);
            outputs = List.copyOf(outputs);
        }

        /** Whether the graph takes an input called {@code name}. */
        public boolean takes(String name) {
            return inputs.stream().anyMatch(input -> input.name().equals(name));
        }
    }

    private OnnxGraph() {
    }

    /** The distinct {@code op_type}s of the model's main graph. */
    public static Set<String> operatorTypes(Path model) throws IOException {
        try (FileChannel channel = FileChannel.open(model, StandardOpenOption.READ)) {
            ByteBuffer bytes = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
            Set<String> types = new TreeSet<>();
            forEachField(bytes, MODEL_GRAPH, graph -> forEachField(graph, GRAPH_NODE, node -> forEachField(node,
                    NODE_OP_TYPE, opType -> types.add(StandardCharsets.UTF_8.decode(opType).toString()))));
            return types;
        } catch (IllegalArgumentException | IndexOutOfBoundsException | java.nio.BufferUnderflowException e) {
            throw new IOException(model + " is not a readable ONNX model: " + e.getMessage(), e);
        }
    }

    /** The graph's declared inputs (initializers excluded) and outputs. */
    public static Interface inputsAndOutputs(Path model) throws IOException {
        try (FileChannel channel = FileChannel.open(model, StandardOpenOption.READ)) {
            ByteBuffer bytes = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
            List<Value> inputs = new ArrayList<>();
            List<Value> outputs = new ArrayList<>();
            Set<String> initializers = new HashSet<>();
            forEachField(bytes, MODEL_GRAPH, graph -> {
                forEachField(graph, GRAPH_INITIALIZER, tensor -> forEachField(tensor, TENSOR_PROTO_NAME,
                        name -> initializers.add(string(name))));
                forEachField(graph, GRAPH_INPUT, value -> inputs.add(value(value)));
                forEachField(graph, GRAPH_OUTPUT, value -> outputs.add(value(value)));
            });
            inputs.removeIf(input -> initializers.contains(input.name()));
            return new Interface(inputs, outputs);
        } catch (IllegalArgumentException | IndexOutOfBoundsException | java.nio.BufferUnderflowException e) {
            throw new IOException(model + " is not a readable ONNX model: " + e.getMessage(), e);
        }
    }

    private static Value value(ByteBuffer valueInfo) throws IOException {
        String[] name = {""};
        int[] elementType = {0};
        List<Long> dims = new ArrayList<>();
        List<String> dimNames = new ArrayList<>();
        boolean[] shaped = {false};
        forEachField(valueInfo, VALUE_NAME, bytes -> name[0] = string(bytes));
        forEachField(valueInfo, VALUE_TYPE, type -> forEachField(type, TYPE_TENSOR, tensor -> {
            elementType[0] = (int) varintField(tensor, TENSOR_ELEM_TYPE, 0);
            forEachField(tensor, TENSOR_SHAPE, shape -> {
                shaped[0] = true;
                forEachField(shape, SHAPE_DIM, dim -> {
                    long size = varintField(dim, DIM_VALUE, -1);
                    String[] param = {""};
                    forEachField(dim, DIM_PARAM, bytes -> param[0] = string(bytes));
                    dims.add(size >= 0 && param[0].isEmpty() ? size : -1L);
                    dimNames.add(param[0]);
                });
            });
        }));
        return new Value(name[0], elementType[0], dims, dimNames, shaped[0]);
    }

    private static String string(ByteBuffer bytes) {
        return StandardCharsets.UTF_8.decode(bytes).toString();
    }

    /** The last value of varint field {@code number} in {@code message}, or {@code absent}. */
    private static long varintField(ByteBuffer message, int number, long absent) {
        ByteBuffer in = message.duplicate();
        long value = absent;
        while (in.hasRemaining()) {
            long key = readVarint(in);
            int field = (int) (key >>> 3);
            int wireType = (int) (key & 7);
            if (wireType == 0) {
                long read = readVarint(in);
                if (field == number) {
                    value = read;
                }
            } else {
                skip(in, field, wireType);
            }
        }
        return value;
    }

    private interface FieldConsumer {
        void accept(ByteBuffer value) throws IOException;
    }

    /** Calls {@code consumer} with the bytes of every length-delimited field {@code number} in {@code message}. */
    private static void forEachField(ByteBuffer message, int number, FieldConsumer consumer) throws IOException {
        ByteBuffer in = message.duplicate();
        while (in.hasRemaining()) {
            long key = readVarint(in);
            int field = (int) (key >>> 3);
            int wireType = (int) (key & 7);
            if (wireType == 2) {
                long length = readVarint(in);
                if (length < 0 || length > in.remaining()) {
                    throw new IllegalArgumentException("field " + field + " claims " + length + " bytes");
                }
                ByteBuffer value = in.slice(in.position(), (int) length);
                in.position(in.position() + (int) length);
                if (field == number) {
                    consumer.accept(value);
                }
            } else {
                skip(in, field, wireType);
            }
        }
    }

    /** Skips the value of a field. */
    private static void skip(ByteBuffer in, int field, int wireType) {
        switch (wireType) {
            case 0 -> readVarint(in);
            case 2 -> {
                long length = readVarint(in);
                if (length < 0 || length > in.remaining()) {
                    throw new IllegalArgumentException("field " + field + " claims " + length + " bytes");
                }
                in.position(in.position() + (int) length);
            }
            case 1 -> in.position(in.position() + 8);
            case 5 -> in.position(in.position() + 4);
            default -> throw new IllegalArgumentException("unsupported protobuf wire type " + wireType + " in field "
                    + field);
        }
    }

    private static long readVarint(ByteBuffer in) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.get();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        throw new IllegalArgumentException("malformed varint");
    }
}
