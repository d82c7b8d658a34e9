package dev.serval.api.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The fast path of {@link OipRequestDecoder}: the plain JSON request body (curl examples, the load benchmark, simple
 * clients), decoded straight from the parser's tokens instead of through a JSON tree (on the no-op benchmark the tree was three quarters of the decode,
 * and the decode a tenth of the event loop's time). It takes a body that is exactly
 * {@code {"id"?, "inputs": [{"name", "datatype", "shape", "data"}, ...]}}, each input's datatype and shape before its
 * flat {@code data} array (the order tritonclient writes its inputs in too), every value of the right type, nothing
 * repeated, nothing after the object, within {@link RequestLimits}; and it declines (null) everything else:
 * parameters, outputs, nested data, the binary extension, another field order, and every body the full decoder
 * refuses. A declined body goes to the full decoder, so its answer, and every refusal's message, are the full
 * decoder's; what this path decodes is what the full decoder decodes from the same body, number for number
 * ({@code DecoderFuzzTest} checks both on every generated body).
 *
 * <p>Hostile input: nothing is sized from what the client declares beyond what the body can hold. A data array is
 * allocated from its shape only when the body is long enough to carry that many elements (each takes two bytes at
 * least, a value and a separator); the number of inputs, a shape's rank and its element count are bounded as in the
 * full decoder. A body declined late (say, on a trailing token) is parsed twice, both times in time linear in its size.
 * Stateless and thread-safe.
 */
final class OipCommonRequests {

    private final JsonFactory factory;
    private final RequestLimits limits;

    OipCommonRequests(JsonFactory factory, RequestLimits limits) {
        this.factory = factory;
        this.limits = limits;
    }

    /** The request {@code body} holds, or null when it is not of the common form (the full decoder decides). */
    OipRequest decode(byte[] body) {
        if (body.length == 0) {
            return null;
        }
        try (JsonParser parser = factory.createParser(body)) {
            return request(parser, body.length);
        } catch (IOException e) {
            return null; // malformed, or over the parser's constraints: the full decoder says which
        }
    }

    private OipRequest request(JsonParser parser, int bodyLength) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        String id = null;
        boolean hasId = false;
        List<Tensor> inputs = null;
        // Inside an object the parser gives a field or the object's end, and throws on anything else.
        for (String field = parser.nextFieldName(); field != null; field = parser.nextFieldName()) {
            JsonToken value = parser.nextToken();
            switch (field) {
                case "id" -> {
                    if (hasId || (value != JsonToken.VALUE_STRING && value != JsonToken.VALUE_NULL)) {
                        return null;
                    }
                    hasId = true;
                    id = value == JsonToken.VALUE_STRING ? parser.getText() : null;
                }
                case "inputs" -> {
                    if (inputs != null || value != JsonToken.START_ARRAY) {
                        return null;
                    }
                    inputs = inputs(parser, bodyLength);
                    if (inputs == null) {
                        return null;
                    }
                }
                default -> {
                    return null;
                }
            }
        }
        if (inputs == null || parser.nextToken() != null) {
            return null;
        }
        return new OipRequest(id, new Tensors(inputs), false, null, -1);
    }

    private List<Tensor> inputs(JsonParser parser, int bodyLength) throws IOException {
        List<Tensor> inputs = new ArrayList<>(1);
        Set<String> names = null; // from the second input on: one name is unique
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (token != JsonToken.START_OBJECT || inputs.size() == limits.maxTensors()) {
                return null;
            }
            Tensor input = input(parser, bodyLength);
            if (input == null) {
                return null;
            }
            if (inputs.size() == 1) {
                names = new HashSet<>();
                names.add(inputs.getFirst().name());
            }
            if (names != null && !names.add(input.name())) {
                return null;
            }
            inputs.add(input);
        }
        return inputs;
    }

    private Tensor input(JsonParser parser, int bodyLength) throws IOException {
        String name = null;
        DataType datatype = null;
        long[] shape = null;
        Object data = null;
        // Inside an object the parser gives a field or the object's end, and throws on anything else.
        for (String field = parser.nextFieldName(); field != null; field = parser.nextFieldName()) {
            JsonToken value = parser.nextToken();
            switch (field) {
                case "name" -> {
                    if (name != null || value != JsonToken.VALUE_STRING) {
                        return null;
                    }
                    name = parser.getText();
                }
                case "datatype" -> {
                    if (datatype != null || value != JsonToken.VALUE_STRING) {
                        return null;
                    }
                    datatype = DataType.of(parser.getText()).orElse(null);
                    if (datatype == null) {
                        return null;
                    }
                }
                case "shape" -> {
                    if (shape != null || value != JsonToken.START_ARRAY) {
                        return null;
                    }
                    shape = shape(parser);
                    if (shape == null) {
                        return null;
                    }
                }
                case "data" -> {
                    if (data != null || value != JsonToken.START_ARRAY || datatype == null || shape == null) {
                        return null;
                    }
                    data = data(parser, datatype, Tensor.elementCount(shape), bodyLength);
                    if (data == null) {
                        return null;
                    }
                }
                default -> {
                    return null;
                }
            }
        }
        if (name == null || data == null) {
            return null;
        }
        return new Tensor(name, datatype, shape, data);
    }

    /** A shape of non-negative dimensions within the rank and element limits, or null. */
    private long[] shape(JsonParser parser) throws IOException {
        long[] dims = new long[4];
        int rank = 0;
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (token != JsonToken.VALUE_NUMBER_INT || rank == RequestLimits.MAX_RANK
                    || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                return null;
            }
            long dim = parser.getLongValue();
            if (dim < 0) {
                return null;
            }
            if (rank == dims.length) {
                dims = Arrays.copyOf(dims, Math.min(2 * rank, RequestLimits.MAX_RANK));
            }
            dims[rank++] = dim;
        }
        long[] shape = Arrays.copyOf(dims, rank);
        long elements;
        try {
            elements = Tensor.elementCount(shape);
        } catch (ArithmeticException e) {
            return null;
        }
        return elements > limits.maxTensorElements() ? null : shape;
    }

    /**
     * A flat array of exactly {@code count} values of {@code datatype}, converted as the full decoder converts them,
     * or null.
     */
    private static Object data(JsonParser parser, DataType datatype, long count, int bodyLength) throws IOException {
        if (count > bodyLength / 2) {
            return null; // the body cannot hold that many: refused by the full decoder, with the count it found
        }
        int n = (int) count;
        Object out = Array.newInstance(Tensor.arrayClass(datatype).componentType(), n);
        int i = 0;
        for (JsonToken token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
            if (i == n || !element(parser, token, out, i)) {
                return null;
            }
            i++;
        }
        return i == n ? out : null;
    }

    /**
     * Sets {@code out[i]} to the current value when it is one the full decoder takes for {@code out}'s datatype:
     * numbers of the 32- or 64-bit integer range (a 64-bit one converted to FP32 directly, not through a double, which
     * rounds some differently) or decimals for FP32 and FP64, integers within the range of INT32 and INT64, booleans
     * for BOOL, strings for BYTES.
     */
    private static boolean element(JsonParser parser, JsonToken token, Object out, int i) throws IOException {
        JsonParser.NumberType integer = token == JsonToken.VALUE_NUMBER_INT ? parser.getNumberType() : null;
        boolean fits = integer == JsonParser.NumberType.INT || integer == JsonParser.NumberType.LONG;
        switch (out) {
            case float[] values when token == JsonToken.VALUE_NUMBER_FLOAT ->
                    values[i] = (float) parser.getDoubleValue();
            case float[] values when fits -> values[i] = parser.getLongValue();
            case double[] values when token == JsonToken.VALUE_NUMBER_FLOAT -> values[i] = parser.getDoubleValue();
            case double[] values when fits -> values[i] = parser.getLongValue();
            case int[] values when integer == JsonParser.NumberType.INT -> values[i] = parser.getIntValue();
            case long[] values when fits -> values[i] = parser.getLongValue();
            case boolean[] values when token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE ->
                    values[i] = token == JsonToken.VALUE_TRUE;
            case String[] values when token == JsonToken.VALUE_STRING -> values[i] = parser.getText();
            default -> {
                return false;
            }
        }
        return true;
    }
}
