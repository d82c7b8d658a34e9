package dev.serval.predictor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads the operator types of an ONNX model's main graph straight from the protobuf wire format
 * ({@code ModelProto.graph = 7}, {@code GraphProto.node = 1}, {@code NodeProto.op_type = 4}), skipping everything
 * else, weights included, without loading them. Sub-graphs inside control-flow attributes and model-local functions
 * are not read. Not thread-confined; stateless.
 */
final class OnnxGraph {

    private static final int MODEL_GRAPH = 7;
    private static final int GRAPH_NODE = 1;
    private static final int NODE_OP_TYPE = 4;

    private OnnxGraph() {
    }

    /** The distinct {@code op_type}s of the model's main graph. */
    static Set<String> operatorTypes(Path model) throws IOException {
        try (FileChannel channel = FileChannel.open(model, StandardOpenOption.READ)) {
            ByteBuffer bytes = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
            Set<String> types = new TreeSet<>();
            forEachField(bytes, MODEL_GRAPH, graph -> forEachField(graph, GRAPH_NODE, node -> forEachField(node,
                    NODE_OP_TYPE, opType -> types.add(StandardCharsets.UTF_8.decode(opType).toString()))));
            return types;
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            throw new IOException(model + " is not a readable ONNX model: " + e.getMessage(), e);
        }
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
            switch (wireType) {
                case 0 -> readVarint(in);
                case 1 -> in.position(in.position() + 8);
                case 5 -> in.position(in.position() + 4);
                case 2 -> {
                    long length = readVarint(in);
                    if (length < 0 || length > in.remaining()) {
                        throw new IllegalArgumentException("field " + field + " claims " + length + " bytes");
                    }
                    ByteBuffer value = in.slice(in.position(), (int) length);
                    in.position(in.position() + (int) length);
                    if (field == number) {
                        consumer.accept(value);
                    }
                }
                default -> throw new IllegalArgumentException("unsupported protobuf wire type " + wireType);
            }
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
