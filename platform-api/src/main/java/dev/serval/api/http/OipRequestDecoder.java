package dev.serval.api.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.error.InvalidInput;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Decodes {@code POST /v2/models/{name}/infer} bodies for text models: one input named {@code text}, datatype
 * {@code BYTES}, shape {@code [n]} (or {@code [n, 1]}), given as JSON data (flat or nested) or, with the
 * binary tensor data extension, as length-prefixed bytes after a JSON header of
 * {@code Inference-Header-Content-Length} bytes. Every error names the field and the offending value.
 * Stateless and thread-safe; runs on the event loop, so it only walks the parsed body once.
 */
final class OipRequestDecoder {

    static final String INPUT = "text";
    static final String OUTPUT = "embedding";

    private static final Set<String> REQUEST_FIELDS = Set.of("id", "parameters", "inputs", "outputs");
    private static final Set<String> INPUT_FIELDS = Set.of("name", "shape", "datatype", "parameters", "data");
    private static final Set<String> OUTPUT_FIELDS = Set.of("name", "parameters");

    private final Json json;

    OipRequestDecoder(Json json) {
        this.json = json;
    }

    /**
     * @param headerLength the {@code Inference-Header-Content-Length} header, or null when the body is all JSON
     */
    OipRequest decode(byte[] body, String headerLength) {
        int jsonLength = jsonLength(body, headerLength);
        JsonNode request = json.readObject(body, 0, jsonLength);
        Json.rejectUnknownFields(request, REQUEST_FIELDS, "");
        String id = optionalString(request, "id");
        boolean binaryOutput = booleanParameter(request.get("parameters"), "binary_data_output", "parameters");
        long timeoutMicros = timeoutParameter(request.get("parameters"));

        JsonNode inputs = request.get("inputs");
        if (inputs == null || !inputs.isArray()) {
            throw new InvalidInput("inputs", "'inputs' must be an array holding the input '" + INPUT + "'"
                    + (inputs == null ? "" : ", not " + Json.describe(inputs)));
        }
        if (inputs.size() != 1) {
            throw new InvalidInput("inputs", "'inputs' must hold exactly one input, '" + INPUT + "'; it holds "
                    + inputs.size());
        }
        List<String> texts = decodeInput(inputs.get(0), body, jsonLength);
        binaryOutput = decodeOutputs(request.get("outputs"), binaryOutput);
        return new OipRequest(id, texts, binaryOutput, timeoutMicros);
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

    private List<String> decodeInput(JsonNode input, byte[] body, int jsonLength) {
        if (!input.isObject()) {
            throw new InvalidInput("inputs[0]", "inputs[0] must be an object, not " + Json.describe(input));
        }
        Json.rejectUnknownFields(input, INPUT_FIELDS, "inputs[0].");
        String name = requiredString(input, "name", "inputs[0].name");
        if (!name.equals(INPUT)) {
            throw new InvalidInput("inputs[0].name", "unknown input '" + name + "'; this model takes one input, '"
                    + INPUT + "'");
        }
        String datatype = requiredString(input, "datatype", "inputs[0].datatype");
        if (!datatype.equals("BYTES")) {
            throw new InvalidInput("inputs[0].datatype", "input '" + INPUT + "' has datatype " + datatype
                    + "; this model takes BYTES");
        }
        int count = elementCount(input.get("shape"));
        JsonNode parameters = input.get("parameters");
        JsonNode binarySize = parameters == null ? null : parameters.get("binary_data_size");
        List<String> texts;
        if (binarySize != null) {
            if (input.has("data")) {
                throw new InvalidInput("inputs[0].data", "input '" + INPUT
                        + "' has both 'data' and parameters.binary_data_size; send one");
            }
            if (!binarySize.canConvertToInt() || binarySize.asInt() < 0) {
                throw new InvalidInput("inputs[0].parameters.binary_data_size",
                        "binary_data_size must be a non-negative integer, not " + binarySize);
            }
            int size = binarySize.asInt();
            if (body.length - jsonLength != size) {
                throw new InvalidInput("inputs[0].parameters.binary_data_size", "binary_data_size is " + size
                        + " but the body holds " + (body.length - jsonLength) + " bytes after the JSON header");
            }
            texts = decodeBinaryStrings(body, jsonLength, size);
        } else {
            if (jsonLength != body.length) {
                throw new InvalidInput("inputs[0].parameters.binary_data_size", "the body has "
                        + (body.length - jsonLength) + " bytes after the JSON header but no input declares "
                        + "parameters.binary_data_size");
            }
            JsonNode data = input.get("data");
            if (data == null) {
                throw new InvalidInput("inputs[0].data", "input '" + INPUT + "' has no 'data'");
            }
            texts = new ArrayList<>(Math.max(count, 1));
            flatten(data, texts, "inputs[0].data");
        }
        if (texts.size() != count) {
            throw new InvalidInput("inputs[0].shape", "input '" + INPUT + "' has shape of " + count
                    + " elements but " + texts.size() + " data elements");
        }
        if (count == 0) {
            throw new InvalidInput("inputs[0].data", "input '" + INPUT + "' is empty; send at least one text");
        }
        return texts;
    }

    /** The number of elements of a {@code [n]} or {@code [n, 1]} shape. */
    private static int elementCount(JsonNode shape) {
        if (shape == null || !shape.isArray()) {
            throw new InvalidInput("inputs[0].shape", "input '" + INPUT + "' needs 'shape', an array such as [2]"
                    + (shape == null ? "" : ", not " + Json.describe(shape)));
        }
        long[] dims = new long[shape.size()];
        for (int i = 0; i < dims.length; i++) {
            JsonNode dim = shape.get(i);
            if (!dim.isIntegralNumber() || dim.asLong() < 0) {
                throw new InvalidInput("inputs[0].shape", "shape " + shape + " must hold non-negative integers");
            }
            dims[i] = dim.asLong();
        }
        boolean vector = dims.length == 1;
        boolean column = dims.length == 2 && dims[1] == 1;
        if (!vector && !column) {
            throw new InvalidInput("inputs[0].shape", "input '" + INPUT + "' has shape " + shape
                    + "; this model takes [n] (or [n, 1])");
        }
        if (dims[0] > Integer.MAX_VALUE) {
            throw new InvalidInput("inputs[0].shape", "shape " + shape + " is too large");
        }
        return (int) dims[0];
    }

    private static void flatten(JsonNode data, List<String> into, String where) {
        if (data.isArray()) {
            for (int i = 0; i < data.size(); i++) {
                flatten(data.get(i), into, where);
            }
        } else if (data.isTextual()) {
            into.add(data.textValue());
        } else {
            throw new InvalidInput(where, "input '" + INPUT + "' element " + into.size() + " is "
                    + Json.describe(data) + "; BYTES data must be strings");
        }
    }

    /** BYTES in the binary extension: each element is a 4-byte little-endian length, then that many bytes. */
    private static List<String> decodeBinaryStrings(byte[] body, int offset, int size) {
        ByteBuffer buffer = ByteBuffer.wrap(body, offset, size).order(ByteOrder.LITTLE_ENDIAN);
        List<String> texts = new ArrayList<>();
        var decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        while (buffer.hasRemaining()) {
            if (buffer.remaining() < 4) {
                throw new InvalidInput("inputs[0].parameters.binary_data_size", "binary data for '" + INPUT
                        + "' ends inside the length prefix of element " + texts.size());
            }
            int length = buffer.getInt();
            if (length < 0 || length > buffer.remaining()) {
                throw new InvalidInput("inputs[0].parameters.binary_data_size", "binary element " + texts.size()
                        + " of '" + INPUT + "' declares " + Integer.toUnsignedString(length) + " bytes but "
                        + buffer.remaining() + " remain");
            }
            ByteBuffer element = buffer.slice(buffer.position(), length);
            buffer.position(buffer.position() + length);
            try {
                texts.add(decoder.decode(element).toString());
            } catch (CharacterCodingException e) {
                throw new InvalidInput("inputs[0]", "binary element " + texts.size() + " of '" + INPUT
                        + "' is not valid UTF-8");
            }
        }
        return texts;
    }

    private static boolean decodeOutputs(JsonNode outputs, boolean binaryByDefault) {
        if (outputs == null) {
            return binaryByDefault;
        }
        if (!outputs.isArray()) {
            throw new InvalidInput("outputs", "'outputs' must be an array, not " + Json.describe(outputs));
        }
        boolean binary = binaryByDefault;
        for (int i = 0; i < outputs.size(); i++) {
            JsonNode output = outputs.get(i);
            String where = "outputs[" + i + "]";
            if (!output.isObject()) {
                throw new InvalidInput(where, where + " must be an object, not " + Json.describe(output));
            }
            Json.rejectUnknownFields(output, OUTPUT_FIELDS, where + ".");
            String name = requiredString(output, "name", where + ".name");
            if (!name.equals(OUTPUT)) {
                throw new InvalidInput(where + ".name", "unknown output '" + name + "'; this model has one output, '"
                        + OUTPUT + "'");
            }
            JsonNode parameters = output.get("parameters");
            if (parameters != null && parameters.has("binary_data")) {
                binary = booleanParameter(parameters, "binary_data", where + ".parameters");
            }
        }
        return binary;
    }

    /** {@code parameters.timeout}: microseconds the client gives the request (Triton's convention), or -1. */
    private static long timeoutParameter(JsonNode parameters) {
        JsonNode timeout = parameters == null ? null : parameters.get("timeout");
        if (timeout == null || timeout.isNull()) {
            return -1;
        }
        if (!timeout.isIntegralNumber() || timeout.asLong() < 0) {
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
