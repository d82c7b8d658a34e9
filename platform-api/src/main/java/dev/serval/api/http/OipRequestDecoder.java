package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Decodes {@code POST /v2/models/{name}/infer} bodies into named tensors: each input has a name, a datatype (BOOL,
 * INT32, INT64, FP32, FP64 or BYTES), a shape and its data, given as JSON (flat or nested, row-major) or, with the
 * binary tensor data extension, as bytes after a JSON header of {@code Inference-Header-Content-Length} bytes
 * (little-endian numbers; BYTES elements each prefixed by a 4-byte little-endian length). Whether the tensors fit
 * the model is the model kind's business ({@link dev.serval.request.TensorIO}); here the body must only be a
 * well-formed request. Every error names the field and the offending value. Stateless and thread-safe; runs on the
 * event loop, so it walks the parsed body once.
 *
 * <p>Hostile input: nothing is allocated from a size the client declares. A shape is checked against
 * {@link RequestLimits} and then against the data actually received (JSON elements are counted before the typed
 * array is made; binary sizes are compared with the bytes present) before any array is allocated, and the number of
 * inputs and requested outputs is bounded, so a request never costs more than its size.
 */
final class OipRequestDecoder {

    private static final Set<String> REQUEST_FIELDS = Set.of("id", "parameters", "inputs", "outputs");
    private static final Set<String> INPUT_FIELDS = Set.of("name", "shape", "datatype", "parameters", "data");
    private static final Set<String> OUTPUT_FIELDS = Set.of("name", "parameters");

    private final Json json;
    private final RequestLimits limits;
    private final OipCommonRequests common;

    OipRequestDecoder(Json json, RequestLimits limits) {
        this.json = json;
        this.limits = limits;
        this.common = new OipCommonRequests(json.factory(), limits);
    }

    /**
     * The request in {@code body}: a body of the common form through {@link OipCommonRequests}, which decodes it
     * without a JSON tree; every other body, and every body that form declines, through {@link #decodeFully}.
     *
     * @param headerLength the {@code Inference-Header-Content-Length} header, or null when the body is all JSON
     */
    OipRequest decode(byte[] body, String headerLength) {
        if (headerLength == null) {
            OipRequest request = common.decode(body);
            if (request != null) {
                return request;
            }
        }
        return decodeFully(body, headerLength);
    }

    /** Any request, through the JSON tree: every field, every form of data, every refusal's message. */
    OipRequest decodeFully(byte[] body, String headerLength) {
        int jsonLength = jsonLength(body, headerLength);
        JsonNode request = json.readObject(body, 0, jsonLength);
        Json.rejectUnknownFields(request, REQUEST_FIELDS, "");
        String id = optionalString(request, "id");
        boolean binaryOutput = booleanParameter(request.get("parameters"), "binary_data_output", "parameters");
        long timeoutMicros = timeoutParameter(request.get("parameters"));

        JsonNode inputs = request.get("inputs");
        if (inputs == null || !inputs.isArray()) {
            throw new InvalidInput("inputs", "'inputs' must be an array of input tensors"
                    + (inputs == null ? "" : ", not " + Json.describe(inputs)));
        }
        limits.checkTensorCount(inputs.size(), "inputs", "inputs");
        List<Tensor> tensors = new ArrayList<>(inputs.size());
        Set<String> names = inputs.size() > 1 ? HashSet.newHashSet(inputs.size()) : null; // one name is unique
        int binaryOffset = jsonLength;
        for (int i = 0; i < inputs.size(); i++) {
            Decoded decoded = decodeInput(inputs.get(i), i, body, binaryOffset);
            if (names != null && !names.add(decoded.tensor.name())) {
                throw new InvalidInput("inputs[" + i + "].name", "input '" + decoded.tensor.name() + "' appears twice");
            }
            tensors.add(decoded.tensor);
            binaryOffset += decoded.binaryBytes;
        }
        if (binaryOffset != body.length) {
            throw new InvalidInput("inputs", "the body has " + (body.length - jsonLength) + " bytes after the JSON "
                    + "header but the inputs declare " + (binaryOffset - jsonLength) + " in parameters.binary_data_size");
        }
        List<OipRequest.Output> outputs = decodeOutputs(request.get("outputs"), binaryOutput, limits);
        return new OipRequest(id, new Tensors(tensors), binaryOutput, outputs, timeoutMicros);
    }

    private record Decoded(Tensor tensor, int binaryBytes) {
    }

    private static int jsonLength(byte[] body, String headerLength) {
        if (headerLength == null) {
            return body.length;
        }
        int length;
        try {
            length = Integer.parseInt(headerLength.trim());
        } catch (NumberFormatException e) {
            throw new InvalidInput("Inference-Header-Content-Length", "header Inference-Header-Content-Length '"
                    + headerLength + "' is not a number");
        }
        if (length < 0 || length > body.length) {
            throw new InvalidInput("Inference-Header-Content-Length", "header Inference-Header-Content-Length "
                    + length + " is outside the body of " + body.length + " bytes");
        }
        return length;
    }

    private Decoded decodeInput(JsonNode input, int index, byte[] body, int binaryOffset) {
        String where = "inputs[" + index + "]";
        if (!input.isObject()) {
            throw new InvalidInput(where, where + " must be an object, not " + Json.describe(input));
        }
        Json.rejectUnknownFields(input, INPUT_FIELDS, where + ".");
        String name = requiredString(input, "name", where + ".name");
        String datatypeName = requiredString(input, "datatype", where + ".datatype");
        DataType datatype = DataType.of(datatypeName).orElseThrow(() -> new InvalidInput(where + ".datatype",
                "input '" + name + "' has datatype " + datatypeName + "; Serval takes "
                        + Arrays.toString(DataType.values())));
        long[] shape = shape(input.get("shape"), name, where);
        long elements = Tensor.elementCount(shape);
        if (elements > limits.maxTensorElements()) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has shape " + Arrays.toString(shape)
                    + " of " + elements + " elements; at most " + limits.maxTensorElements()
                    + " are allowed per tensor (serval.http.max-tensor-elements)");
        }
        int count = (int) elements;
        JsonNode parameters = input.get("parameters");
        JsonNode binarySize = parameters == null ? null : parameters.get("binary_data_size");
        if (binarySize != null) {
            if (input.has("data")) {
                throw new InvalidInput(where + ".data", "input '" + name
                        + "' has both 'data' and parameters.binary_data_size; send one");
            }
            if (!binarySize.isIntegralNumber() || !binarySize.canConvertToInt() || binarySize.asInt() < 0) {
                throw new InvalidInput(where + ".parameters.binary_data_size",
                        "binary_data_size must be a non-negative integer, not " + binarySize);
            }
            int size = binarySize.asInt();
            if (size > body.length - binaryOffset) {
                throw new InvalidInput(where + ".parameters.binary_data_size", "binary_data_size is " + size
                        + " but the body holds " + (body.length - binaryOffset) + " bytes after the JSON header"
                        + " and the inputs before this one");
            }
            Object data = binaryData(datatype, body, binaryOffset, size, count, name, where);
            return new Decoded(tensor(name, datatype, shape, data, where), size);
        }
        JsonNode data = input.get("data");
        if (data == null) {
            throw new InvalidInput(where + ".data", "input '" + name + "' has no 'data'");
        }
        int received = countElements(data, limits.maxTensorElements());
        if (received != count) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has shape of " + count
                    + " elements but " + (received < 0 ? "more than " + limits.maxTensorElements() : received)
                    + " data elements");
        }
        return new Decoded(tensor(name, datatype, shape, jsonData(datatype, data, count, name, where), where), 0);
    }

    private static Tensor tensor(String name, DataType datatype, long[] shape, Object data, String where) {
        int length = java.lang.reflect.Array.getLength(data);
        if (length != Tensor.elementCount(shape)) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has shape of " + Tensor.elementCount(shape)
                    + " elements but " + length + " data elements");
        }
        return new Tensor(name, datatype, shape, data);
    }

    private static long[] shape(JsonNode shape, String name, String where) {
        if (shape == null || !shape.isArray()) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' needs 'shape', an array such as [2]"
                    + (shape == null ? "" : ", not " + Json.describe(shape)));
        }
        if (shape.size() > RequestLimits.MAX_RANK) {
            throw new InvalidInput(where + ".shape", "input '" + name + "' has a shape of " + shape.size()
                    + " dimensions; at most " + RequestLimits.MAX_RANK + " are allowed");
        }
        long[] dims = new long[shape.size()];
        for (int i = 0; i < dims.length; i++) {
            JsonNode dim = shape.get(i);
            if (!dim.isIntegralNumber() || !dim.canConvertToLong() || dim.asLong() < 0) {
                throw new InvalidInput(where + ".shape", "shape " + shape + " must hold non-negative integers");
            }
            dims[i] = dim.asLong();
        }
        try {
            Tensor.elementCount(dims);
        } catch (ArithmeticException e) {
            throw new InvalidInput(where + ".shape", "shape " + shape + " is too large");
        }
        return dims;
    }

    // --- JSON data -------------------------------------------------------------------------------------------------

    /**
     * The leaves of {@code data} (a scalar, or arrays nested to any depth), without allocating; -1 as soon as there are
     * more than {@code max}.
     */
    static int countElements(JsonNode data, long max) {
        if (!data.isArray()) {
            return 1;
        }
        long total = 0;
        for (int i = 0; i < data.size(); i++) {
            int inner = countElements(data.get(i), max);
            if (inner < 0) {
                return -1;
            }
            total += inner;
            if (total > max) {
                return -1;
            }
        }
        return (int) total;
    }

    /**
     * The elements of {@code data} (flat or nested arrays, row-major) as the datatype's array.
     *
     * @param count the number of leaves, as counted by {@link #countElements} (so allocating it costs what was sent)
     */
    private static Object jsonData(DataType datatype, JsonNode data, int count, String name, String where) {
        List<JsonNode> elements = new ArrayList<>(count);
        flatten(data, elements);
        int n = elements.size();
        String field = where + ".data";
        switch (datatype) {
            case BYTES -> {
                String[] out = new String[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isTextual()) {
                        throw wrongElement(name, i, e, "BYTES data must be strings", field);
                    }
                    out[i] = e.textValue();
                }
                return out;
            }
            case BOOL -> {
                boolean[] out = new boolean[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isBoolean()) {
                        throw wrongElement(name, i, e, "BOOL data must be true or false", field);
                    }
                    out[i] = e.booleanValue();
                }
                return out;
            }
            case INT32 -> {
                int[] out = new int[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isIntegralNumber() || !e.canConvertToInt()) {
                        throw wrongElement(name, i, e, "INT32 data must be integers in the 32-bit range", field);
                    }
                    out[i] = e.intValue();
                }
                return out;
            }
            case INT64 -> {
                long[] out = new long[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isIntegralNumber() || !e.canConvertToLong()) {
                        throw wrongElement(name, i, e, "INT64 data must be integers in the 64-bit range", field);
                    }
                    out[i] = e.longValue();
                }
                return out;
            }
            case FP32 -> {
                float[] out = new float[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isNumber()) {
                        throw wrongElement(name, i, e, "FP32 data must be numbers", field);
                    }
                    out[i] = e.floatValue();
                }
                return out;
            }
            case FP64 -> {
                double[] out = new double[n];
                for (int i = 0; i < n; i++) {
                    JsonNode e = elements.get(i);
                    if (!e.isNumber()) {
                        throw wrongElement(name, i, e, "FP64 data must be numbers", field);
                    }
                    out[i] = e.doubleValue();
                }
                return out;
            }
        }
        throw new AssertionError(datatype);
    }

    private static InvalidInput wrongElement(String name, int index, JsonNode element, String rule, String field) {
        return new InvalidInput(field, "input '" + name + "' element " + index + " is " + Json.describe(element) + "; "
                + rule);
    }

    private static void flatten(JsonNode data, List<JsonNode> into) {
        if (data.isArray()) {
            for (int i = 0; i < data.size(); i++) {
                flatten(data.get(i), into);
            }
        } else {
            into.add(data);
        }
    }

    // --- binary data -----------------------------------------------------------------------------------------------

    private static Object binaryData(DataType datatype, byte[] body, int offset, int size, int count, String name,
            String where) {
        if (datatype == DataType.BYTES) {
            return BinaryTensorData.strings(body, offset, size, count, name, where);
        }
        long expected = (long) count * datatype.byteSize();
        if (size != expected) {
            throw new InvalidInput(where + ".parameters.binary_data_size", "binary_data_size is " + size + " but "
                    + count + " " + datatype + " elements of input '" + name + "' take " + expected + " bytes");
        }
        return BinaryTensorData.numbers(datatype, ByteBuffer.wrap(body, offset, size).order(ByteOrder.LITTLE_ENDIAN),
                count);
    }

    // --- outputs and parameters ------------------------------------------------------------------------------------

    private static List<OipRequest.Output> decodeOutputs(JsonNode outputs, boolean binaryByDefault,
            RequestLimits limits) {
        if (outputs == null) {
            return null;
        }
        if (!outputs.isArray()) {
            throw new InvalidInput("outputs", "'outputs' must be an array, not " + Json.describe(outputs));
        }
        limits.checkTensorCount(outputs.size(), "outputs asked for", "outputs");
        List<OipRequest.Output> requested = new ArrayList<>(outputs.size());
        for (int i = 0; i < outputs.size(); i++) {
            JsonNode output = outputs.get(i);
            String where = "outputs[" + i + "]";
            if (!output.isObject()) {
                throw new InvalidInput(where, where + " must be an object, not " + Json.describe(output));
            }
            Json.rejectUnknownFields(output, OUTPUT_FIELDS, where + ".");
            String name = requiredString(output, "name", where + ".name");
            JsonNode parameters = output.get("parameters");
            boolean binary = parameters != null && parameters.has("binary_data")
                    ? booleanParameter(parameters, "binary_data", where + ".parameters") : binaryByDefault;
            requested.add(new OipRequest.Output(name, binary));
        }
        return requested;
    }

    /** {@code parameters.timeout}: microseconds the client gives the request (Triton's convention), or -1. */
    private static long timeoutParameter(JsonNode parameters) {
        JsonNode timeout = parameters == null ? null : parameters.get("timeout");
        if (timeout == null || timeout.isNull()) {
            return -1;
        }
        if (!timeout.isIntegralNumber() || !timeout.canConvertToLong() || timeout.asLong() < 0) {
            throw new InvalidInput("parameters.timeout", "'parameters.timeout' must be a non-negative integer of "
                    + "microseconds, not " + timeout);
        }
        return timeout.asLong();
    }

    private static boolean booleanParameter(JsonNode parameters, String name, String where) {
        if (parameters == null) {
            return false;
        }
        if (!parameters.isObject()) {
            throw new InvalidInput(where, "'" + where + "' must be an object, not " + Json.describe(parameters));
        }
        JsonNode value = parameters.get(name);
        if (value == null) {
            return false;
        }
        if (!value.isBoolean()) {
            throw new InvalidInput(where + "." + name, "'" + where + "." + name + "' must be true or false, not "
                    + value);
        }
        return value.booleanValue();
    }

    private static String requiredString(JsonNode node, String field, String where) {
        JsonNode value = node.get(field);
        if (value == null) {
            throw new InvalidInput(where, "'" + where + "' is required");
        }
        if (!value.isTextual()) {
            throw new InvalidInput(where, "'" + where + "' must be a string, not " + Json.describe(value));
        }
        return value.textValue();
    }

    private static String optionalString(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw new InvalidInput(field, "'" + field + "' must be a string, not " + Json.describe(value));
        }
        return value.textValue();
    }
}
