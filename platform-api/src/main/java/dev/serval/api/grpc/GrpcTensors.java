package dev.serval.api.grpc;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import dev.serval.api.grpc.v2.InferTensorContents;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.grpc.v2.ModelInferResponse;
import dev.serval.api.http.BinaryTensorData;
import dev.serval.api.http.OipResponseEncoder;
import dev.serval.api.http.RequestLimits;
import dev.serval.deployment.Inference;
import dev.serval.error.InvalidInput;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The gRPC service's tensors: a {@code ModelInferRequest}'s inputs as {@link Tensors} (from {@code raw_input_contents}
 * or the typed {@code contents}), and an {@link Inference} as a {@code ModelInferResponse} (raw contents when the
 * request sent raw contents, as Triton answers, typed contents otherwise). The limits are REST's
 * ({@link RequestLimits}): a count of tensors, a rank, elements per tensor; each tensor's declared element count is
 * checked against the bytes or values actually sent before an array is allocated from it. The message itself is
 * bounded before it is parsed ({@code serval.http.max-body-size}, the gRPC server's maximum message size).
 */
final class GrpcTensors {

    private GrpcTensors() {
    }

    /**
     * @throws InvalidInput naming the input and field: unknown datatype, a shape over the limits, contents that do not
     *                      match the shape, raw and typed contents mixed, two inputs of one name
     */
    static Tensors inputs(ModelInferRequest request, RequestLimits limits) {
        int count = request.getInputsCount();
        limits.checkTensorCount(count, "inputs", "inputs");
        limits.checkTensorCount(request.getOutputsCount(), "outputs", "outputs");
        if (count == 0) {
            throw new InvalidInput("inputs", "'inputs' is empty; send at least one input tensor");
        }
        boolean raw = request.getRawInputContentsCount() > 0;
        if (raw && request.getRawInputContentsCount() != count) {
            throw new InvalidInput("raw_input_contents", "raw_input_contents has " + request.getRawInputContentsCount()
                    + " entries for " + count + " inputs; send one per input, in order");
        }
        List<Tensor> tensors = new ArrayList<>(count);
        Set<String> names = new HashSet<>();
        for (int i = 0; i < count; i++) {
            ModelInferRequest.InferInputTensor input = request.getInputs(i);
            String where = "inputs[" + i + "]";
            String name = input.getName();
            if (name.isEmpty() || name.length() > 256) {
                throw new InvalidInput(where + ".name", "input " + i + " needs a name of 1 to 256 characters");
            }
            if (!names.add(name)) {
                throw new InvalidInput(where + ".name", "input '" + name + "' appears twice");
            }
            DataType datatype = DataType.of(input.getDatatype()).orElseThrow(() -> new InvalidInput(where + ".datatype",
                    "input '" + name + "' has datatype '" + truncated(input.getDatatype()) + "'; Serval carries BOOL, "
                    + "INT32, INT64, FP32, FP64 and BYTES"));
            long[] shape = shape(input, name, where, limits);
            int elements = (int) Tensor.elementCount(shape);
            Object data;
            if (raw) {
                if (input.hasContents()) {
                    throw new InvalidInput(where + ".contents", "input '" + name + "' has contents, but the request "
                            + "sends raw_input_contents: use one or the other for every input");
                }
                data = raw(datatype, request.getRawInputContents(i), elements, name, where);
            } else {
                data = typed(datatype, input.getContents(), elements, name, where);
            }
            tensors.add(new Tensor(name, datatype, shape, data));
        }
        return new Tensors(tensors);
    }

    private static long[] shape(ModelInferRequest.InferInputTensor input, String name, String where,
            RequestLimits limits) {
        if (input.getShapeCount() > RequestLimits.MAX_RANK) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has a shape of " + input.getShapeCount()
                    + " dimensions; at most " + RequestLimits.MAX_RANK + " are allowed");
        }
        long[] shape = new long[input.getShapeCount()];
        long elements = 1;
        for (int d = 0; d < shape.length; d++) {
            long dim = input.getShape(d);
            if (dim < 0) {
                throw new InvalidInput(where + ".shape", "input '" + name + "' has shape " + input.getShapeList()
                        + "; dimensions must be non-negative");
            }
            shape[d] = dim;
            elements = dim == 0 || elements == 0 ? 0 : elements > limits.maxTensorElements() / dim
                    ? limits.maxTensorElements() + 1 : elements * dim;
        }
        if (elements > limits.maxTensorElements()) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has shape " + input.getShapeList()
                    + ", more than " + limits.maxTensorElements() + " elements (serval.http.max-tensor-elements)");
        }
        return shape;
    }

    /** Raw contents: little-endian numbers, one byte per BOOL, BYTES as 4-byte little-endian lengths and UTF-8. */
    private static Object raw(DataType datatype, ByteString bytes, int count, String name, String where) {
        ByteBuffer buffer = bytes.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        String field = "raw_input_contents[" + where.substring("inputs[".length());
        if (datatype == DataType.BYTES) {
            return strings(buffer, count, name, field);
        }
        long expected = (long) count * datatype.byteSize();
        if (bytes.size() != expected) {
            throw new InvalidInput(field, "input '" + name + "' has " + count + " " + datatype + " elements, "
                    + expected + " bytes, but its raw contents hold " + bytes.size() + " bytes");
        }
        return BinaryTensorData.numbers(datatype, buffer, count);
    }

    private static String[] strings(ByteBuffer buffer, int count, String name, String field) {
        // Each element takes at least its 4-byte length: a count the bytes cannot hold is refused before the array.
        if (count > buffer.remaining() / 4) {
            throw new InvalidInput(field, "input '" + name + "' declares " + count + " BYTES elements, but its raw "
                    + "contents of " + buffer.remaining() + " bytes hold at most " + buffer.remaining() / 4
                    + " (each element is a 4-byte length and its bytes)");
        }
        String[] texts = new String[count];
        var decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        for (int i = 0; i < count; i++) {
            if (buffer.remaining() < 4) {
                throw new InvalidInput(field, "input '" + name + "' declares " + count + " BYTES elements but its raw "
                        + "contents end after " + i);
            }
            int length = buffer.getInt();
            if (length < 0 || length > buffer.remaining()) {
                throw new InvalidInput(field, "element " + i + " of '" + name + "' declares "
                        + Integer.toUnsignedString(length) + " bytes but " + buffer.remaining() + " remain");
            }
            ByteBuffer element = buffer.slice(buffer.position(), length);
            buffer.position(buffer.position() + length);
            texts[i] = utf8(decoder, element, i, name, field);
        }
        if (buffer.hasRemaining()) {
            throw new InvalidInput(field, "input '" + name + "' has shape of " + count + " elements but its raw "
                    + "contents hold more");
        }
        return texts;
    }

    private static String utf8(java.nio.charset.CharsetDecoder decoder, ByteBuffer element, int index, String name,
            String field) {
        try {
            return decoder.decode(element).toString();
        } catch (CharacterCodingException e) {
            throw new InvalidInput(field, "element " + index + " of '" + name + "' is not valid UTF-8");
        }
    }

    private static Object typed(DataType datatype, InferTensorContents contents, int count, String name,
            String where) {
        int given = switch (datatype) {
            case BOOL -> contents.getBoolContentsCount();
            case INT32 -> contents.getIntContentsCount();
            case INT64 -> contents.getInt64ContentsCount();
            case FP32 -> contents.getFp32ContentsCount();
            case FP64 -> contents.getFp64ContentsCount();
            case BYTES -> contents.getBytesContentsCount();
        };
        if (given != count) {
            throw new InvalidInput(where + ".contents", "input '" + name + "' has shape of " + count + " elements but "
                    + given + " " + datatype + " contents" + (given == 0 ? " (for " + datatype + " send "
                    + field(datatype) + ", or raw_input_contents)" : ""));
        }
        return switch (datatype) {
            case BOOL -> {
                boolean[] out = new boolean[count];
                for (int i = 0; i < count; i++) {
                    out[i] = contents.getBoolContents(i);
                }
                yield out;
            }
            case INT32 -> contents.getIntContentsList().stream().mapToInt(Integer::intValue).toArray();
            case INT64 -> contents.getInt64ContentsList().stream().mapToLong(Long::longValue).toArray();
            case FP32 -> {
                float[] out = new float[count];
                for (int i = 0; i < count; i++) {
                    out[i] = contents.getFp32Contents(i);
                }
                yield out;
            }
            case FP64 -> contents.getFp64ContentsList().stream().mapToDouble(Double::doubleValue).toArray();
            case BYTES -> {
                String[] out = new String[count];
                var decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
                for (int i = 0; i < count; i++) {
                    out[i] = utf8(decoder, contents.getBytesContents(i).asReadOnlyByteBuffer(), i, name,
                            where + ".contents.bytes_contents");
                }
                yield out;
            }
        };
    }

    private static String field(DataType datatype) {
        return switch (datatype) {
            case BOOL -> "bool_contents";
            case INT32 -> "int_contents";
            case INT64 -> "int64_contents";
            case FP32 -> "fp32_contents";
            case FP64 -> "fp64_contents";
            case BYTES -> "bytes_contents";
        };
    }

    private static String truncated(String value) {
        return value.length() <= 32 ? value : value.substring(0, 32) + "...";
    }

    /** The answer, its outputs those {@code requested} names (all when null), raw or typed. */
    static ModelInferResponse response(String model, String id, Inference answer, List<String> requested,
            boolean raw) {
        List<Tensor> outputs = requested == null ? answer.outputs().tensors() : answer.select(requested);
        ModelInferResponse.Builder response = ModelInferResponse.newBuilder().setModelName(model)
                .setModelVersion(answer.version()).setId(id);
        for (Tensor tensor : outputs) {
            ModelInferResponse.InferOutputTensor.Builder output = ModelInferResponse.InferOutputTensor.newBuilder()
                    .setName(tensor.name()).setDatatype(tensor.datatype().name());
            for (long dim : tensor.shape()) {
                output.addShape(dim);
            }
            if (raw) {
                // The encoder's fresh array, handed over without a copy.
                response.addRawOutputContents(UnsafeByteOperations.unsafeWrap(OipResponseEncoder.binary(tensor)));
            } else {
                output.setContents(contents(tensor));
            }
            response.addOutputs(output);
        }
        return response.build();
    }

    private static InferTensorContents contents(Tensor tensor) {
        InferTensorContents.Builder contents = InferTensorContents.newBuilder();
        switch (tensor.data()) {
            case float[] values -> {
                for (float value : values) {
                    contents.addFp32Contents(value);
                }
            }
            case double[] values -> {
                for (double value : values) {
                    contents.addFp64Contents(value);
                }
            }
            case int[] values -> {
                for (int value : values) {
                    contents.addIntContents(value);
                }
            }
            case long[] values -> {
                for (long value : values) {
                    contents.addInt64Contents(value);
                }
            }
            case boolean[] values -> {
                for (boolean value : values) {
                    contents.addBoolContents(value);
                }
            }
            case String[] values -> {
                for (String value : values) {
                    contents.addBytesContents(ByteString.copyFromUtf8(value));
                }
            }
            default -> throw new IllegalStateException("unexpected data " + tensor.data().getClass());
        }
        return contents.build();
    }
}
