package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.serval.api.http.Fuzz.Source;
import dev.serval.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the request decoders ({@link OipRequestDecoder}, JSON and the binary tensor data extension, and
 * {@link OpenAiEmbeddings#decode}) with structured bodies — valid-looking requests with mutated shapes, datatypes, data,
 * nesting, names and binary sizes — and with raw bytes. Each body must meet {@link DecodeContract}: a well-formed
 * request or a 4xx refusal, never another exception or an {@link OutOfMemoryError}, work bounded by the body's size;
 * and what is decoded must be what the body says (no number silently truncated).
 *
 * <p>The properties run on {@link Fuzz}, a seeded harness on plain JUnit: how many tries is the system property
 * {@code serval.fuzz.tries} (300 in platform-api/pom.xml, seconds in {@code bin/test}; longer on demand with
 * {@code -Dserval.fuzz.tries=100000}), the seed {@code serval.fuzz.seed} (random and printed unless given; a failure
 * names its own seed and how to replay it; docs/testing.md). Runs in its own Surefire fork with a 512 MB heap
 * (execution {@code decoder-fuzz} in platform-api/pom.xml), so that a decoder sizing an allocation from a declared
 * shape fails at once instead of taking gigabytes of a shared machine. A counterexample becomes a plain test in
 * {@link DecoderRegressionTest}.
 */
@Tag("decoder-fuzz") // runs in its own small-heap fork (platform-api/pom.xml)
class DecoderFuzzTest {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final List<String> DATATYPES = List.of("BOOL", "INT32", "INT64", "FP32", "FP64", "BYTES");

    // --- properties ------------------------------------------------------------------------------------------------

    @Test
    void oipJsonBodiesDecodeToWhatTheySayOrAreRefused() {
        Fuzz.forAll(DecoderFuzzTest::oipJsonBody).check(body -> {
            OipRequest request = DecodeContract.oip(body.bytes(), null);
            if (request != null) {
                checkFaithful(body.tree(), request);
            }
        });
    }

    @Test
    void validOipJsonBodiesDecode() {
        Fuzz.forAll(DecoderFuzzTest::validOipJsonBody).check(body -> {
            OipRequest request = DecodeContract.oip(body.bytes(), null);
            if (request == null) {
                throw new AssertionError("a valid request was refused: " + body);
            }
            checkFaithful(body.tree(), request);
        });
    }

    /**
     * The fast path ({@link OipCommonRequests}) takes a body only when the full decoder takes it too, and decodes it to
     * the same request, number for number: over common bodies (its own form), every generated OIP body, their text
     * mutations and raw bytes.
     */
    @Test
    void theFastPathDecodesOnlyWhatTheFullDecoderDecodesAndTheSame() {
        Fuzz.forAll(source -> switch (source.between(0, 4)) {
            case 0 -> commonOipJsonBody(source).bytes();
            case 1 -> oipJsonBody(source).bytes();
            case 2 -> validOipJsonBody(source).bytes();
            case 3 -> mutatedOipJsonText(source);
            default -> rawBody(source);
        }).describedAs(Fuzz::show).check(DecoderFuzzTest::fastPathAgreesWithTheFullDecoder);
    }

    /** Every body of the common form takes the fast path (else the property above could hold by declining all). */
    @Test
    void commonOipJsonBodiesTakeTheFastPath() {
        Fuzz.forAll(DecoderFuzzTest::commonOipJsonBody).check(body -> {
            if (COMMON.decode(body.bytes()) == null) {
                throw new AssertionError("the fast path declined a body of its form: " + body);
            }
            fastPathAgreesWithTheFullDecoder(body.bytes());
        });
    }

    @Test
    void mutatedOipJsonTextIsDecodedOrRefused() {
        Fuzz.forAll(DecoderFuzzTest::mutatedOipJsonText).check(body -> DecodeContract.oip(body, null));
    }

    @Test
    void oipBinaryBodiesAreDecodedOrRefused() {
        Fuzz.forAll(DecoderFuzzTest::oipBinaryBody).check(body -> {
            OipRequest request = DecodeContract.oip(body.bytes(), body.headerLength());
            if (request != null) {
                for (JsonNode input : body.header().get("inputs")) {
                    JsonNode size = input.path("parameters").path("binary_data_size");
                    if (!size.isMissingNode() && !size.isIntegralNumber()) {
                        throw new AssertionError("binary_data_size " + size + " was accepted: " + body);
                    }
                }
            }
        });
    }

    @Test
    void rawBytesAreDecodedOrRefusedByTheOipDecoder() {
        Fuzz.forAll(source -> new RawBody(rawBody(source), headerLength(source)))
                .check(body -> DecodeContract.oip(body.bytes(), body.headerLength()));
    }

    @Test
    void embeddingsBodiesDecodeToWhatTheySayOrAreRefused() {
        Fuzz.forAll(DecoderFuzzTest::embeddingsBody).check(body -> {
            EmbeddingsRequest request = DecodeContract.embeddings(body.bytes());
            if (request != null) {
                checkFaithful(body.tree(), request);
            }
        });
    }

    @Test
    void rawBytesAreDecodedOrRefusedByTheEmbeddingsDecoder() {
        Fuzz.forAll(DecoderFuzzTest::rawBody).check(DecodeContract::embeddings);
    }

    /**
     * The cheapest attack: a ~90-byte body declaring a tensor of billions of elements. Refusing it must cost nothing
     * like the declared size (the contract's allocation bound; its time bound says "quickly"). Every case, in order.
     */
    @Test
    void aTinyBodyWithAnEnormousDeclaredShapeIsAnsweredQuickly() {
        for (List<Long> shape : SHAPES_BEYOND_ANY_BODY) {
            for (String datatype : DATATYPES) {
                for (boolean binary : new boolean[] {false, true}) {
                    ObjectNode input = NODES.objectNode().put("name", "x").put("datatype", datatype);
                    ArrayNode dims = input.putArray("shape");
                    shape.forEach(dims::add);
                    if (binary) {
                        input.putObject("parameters").put("binary_data_size", 0);
                    } else {
                        input.putArray("data");
                    }
                    ObjectNode body = NODES.objectNode();
                    body.putArray("inputs").add(input);
                    byte[] bytes = write(body);
                    DecodeContract.oip(bytes, binary ? Integer.toString(bytes.length) : null);
                }
            }
        }
    }

    /**
     * Many small inputs in one body (tens of thousands fit in the default 8 MB body limit). With the default limits
     * they are refused at once, naming the limit; with a tensor limit raised far above them, they decode in time
     * linear in their number, not its square. Few tries: each body is megabytes.
     */
    @Test
    void manyInputsDecodeInTimeLinearInTheirNumber() {
        Fuzz.forAll(source -> source.between(10_000, 30_000)).tries(4).noShrink()
                .describedAs(inputs -> "manyInputs(" + inputs + ")")
                .check(inputs -> {
                    byte[] body = manyInputs(inputs);
                    checkRefusedForTooManyInputs(body, inputs);
                    long start = System.nanoTime();
                    OipRequest request = DecodeContract.oip(DecodeContract.OIP_MANY_TENSORS, body, null);
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    // 40 µs per input on top of half a second, for a shared machine (the square: 4-17 s at 20-30,000)
                    long allowed = 500 + inputs / 25;
                    if (request == null || request.inputs().size() != inputs || millis > allowed) {
                        throw new AssertionError(inputs + " inputs (" + body.length + " bytes) took " + millis
                                + " ms, " + (request == null ? "refused" : "decoded") + "; allowed " + allowed + " ms");
                    }
                });
    }

    /** With the default limits, a body of {@code inputs} inputs (more than 64) is refused quickly, naming the limit. */
    static void checkRefusedForTooManyInputs(byte[] body, int inputs) {
        long start = System.nanoTime();
        RuntimeException refusal = DecodeContract.oipRefusal(body, null);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(refusal.getMessage().contains("serval.http.max-tensors-per-request"),
                () -> "refused " + inputs + " inputs for another reason: " + refusal.getMessage());
        long allowed = 500 + inputs / 50; // parsing the body is all there is to do
        assertTrue(millis <= allowed, () -> "refusing " + inputs + " inputs took " + millis + " ms; allowed "
                + allowed + " ms");
    }

    static byte[] manyInputs(int count) {
        StringBuilder json = new StringBuilder(count * 56).append("{\"inputs\":[");
        for (int i = 0; i < count; i++) {
            json.append(i == 0 ? "" : ",").append("{\"name\":\"in").append(i)
                    .append("\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[0.5]}");
        }
        return json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    // --- the fast path ---------------------------------------------------------------------------------------------

    private static final OipCommonRequests COMMON = new OipCommonRequests(DecodeContract.JSON.factory(),
            RequestLimits.defaults());

    private static void fastPathAgreesWithTheFullDecoder(byte[] body) {
        OipRequest fast = COMMON.decode(body);
        if (fast == null) {
            return;
        }
        OipRequest full;
        try {
            full = DecodeContract.OIP.decodeFully(body, null);
        } catch (RuntimeException refused) {
            throw new AssertionError("the fast path took a body the full decoder refuses (" + refused.getMessage()
                    + ")", refused);
        }
        assertEquals(full.id(), fast.id(), "id");
        assertEquals(full.binaryOutput(), fast.binaryOutput(), "binary output");
        assertEquals(full.outputs(), fast.outputs(), "outputs");
        assertEquals(full.timeoutMicros(), fast.timeoutMicros(), "timeout");
        assertEquals(full.inputs().size(), fast.inputs().size(), "inputs");
        for (int i = 0; i < full.inputs().size(); i++) {
            Tensor expected = full.inputs().tensors().get(i);
            Tensor actual = fast.inputs().tensors().get(i);
            assertEquals(expected.name(), actual.name(), "name");
            assertEquals(expected.datatype(), actual.datatype(), "datatype");
            assertTrue(Arrays.equals(expected.shape(), actual.shape()), "shape");
            // Element by element, floats by their bits: -0.0 and 0.0 differ, NaN equals NaN.
            assertTrue(Arrays.deepEquals(new Object[] {expected.data()}, new Object[] {actual.data()}),
                    () -> "input '" + expected.name() + "': " + Arrays.deepToString(new Object[] {expected.data()})
                            + " decoded as " + Arrays.deepToString(new Object[] {actual.data()}));
        }
    }

    /**
     * A body of the fast path's form: an optional id, then inputs with name, datatype, shape and flat data in that
     * order, elements of every kind a number can take in JSON (ints, longs, decimals, exponents) for every datatype.
     */
    static JsonBody commonOipJsonBody(Source source) {
        List<ObjectNode> inputs = source.uniqueList(0, 6, s -> {
            String datatype = s.pick(DATATYPES);
            List<Long> dims = s.list(1, 3, t -> t.between(0L, 5L));
            int count = (int) Tensor.elementCount(dims.stream().mapToLong(Long::longValue).toArray());
            ObjectNode input = NODES.objectNode().put("name", s.string(0, 12)).put("datatype", datatype);
            ArrayNode shape = input.putArray("shape");
            dims.forEach(shape::add);
            input.putArray("data").addAll(s.listOfSize(count, t -> commonElement(t, datatype)));
            return input;
        }, input -> input.get("name").textValue());
        ObjectNode body = NODES.objectNode();
        String id = source.orNull(0.5, s -> s.string(0, 12));
        if (id != null) {
            body.put("id", id);
        }
        body.putArray("inputs").addAll(inputs);
        return JsonBody.of(body);
    }

    /** A valid element of {@code datatype}, of any JSON number form the full decoder takes for it. */
    private static JsonNode commonElement(Source source, String datatype) {
        return switch (datatype) {
            case "FP32", "FP64" -> switch (source.between(0, 5)) {
                case 0 -> NODES.numberNode(source.anyInt());
                case 1 -> NODES.numberNode(source.anyLong()); // rounded once, as the full decoder rounds it
                // 2^60 + 2^36 + 1 rounds to a different float through a double (2^60 + 2^36, a tie, to even: 2^60)
                // than directly (2^60 + 2^37), as the full decoder rounds it
                case 2 -> NODES.numberNode(source.pick(16_777_217L, 1_152_921_573_326_323_713L, Long.MIN_VALUE));
                default -> element(source, datatype);
            };
            default -> element(source, datatype);
        };
    }

    // --- OIP JSON bodies -------------------------------------------------------------------------------------------

    /** A generated JSON body: the tree (to compare the decoded request with) and its bytes (what is decoded). */
    record JsonBody(ObjectNode tree, byte[] bytes) {
        static JsonBody of(ObjectNode tree) {
            return new JsonBody(tree, write(tree));
        }

        @Override
        public String toString() {
            return Fuzz.show(bytes);
        }
    }

    /** Raw bytes and the {@code Inference-Header-Content-Length} they were sent with (null: none). */
    record RawBody(byte[] bytes, String headerLength) {
        @Override
        public String toString() {
            return "Inference-Header-Content-Length " + (headerLength == null ? "absent" : "'" + headerLength + "'")
                    + ", body of " + Fuzz.show(bytes);
        }
    }

    static JsonBody oipJsonBody(Source source) {
        // Half the inputs valid, so that mutations elsewhere in the request (its parameters) reach the decoder's end.
        return JsonBody.of(request(source, s -> s.bool() ? input(s, true) : validInput(s)));
    }

    static JsonBody validOipJsonBody(Source source) {
        List<ObjectNode> inputs = source.uniqueList(1, 6, DecoderFuzzTest::validInput,
                input -> input.get("name").textValue());
        Long timeout = source.orNull(0.5, s -> s.between(0, Long.MAX_VALUE));
        ObjectNode body = NODES.objectNode();
        body.putArray("inputs").addAll(inputs);
        if (timeout != null) {
            body.putObject("parameters").put("timeout", timeout);
        }
        return JsonBody.of(body);
    }

    private static ObjectNode request(Source source, Fuzz.Gen<ObjectNode> input) {
        List<ObjectNode> inputs = source.frequency(10, 1) == 0 ? source.list(0, 4, input) : source.list(5, 400, input);
        JsonNode parameters = source.orNull(0.4, s -> switch (s.frequency(1, 5, 1, 1)) {
            case 0 -> NODES.objectNode();
            case 1 -> NODES.objectNode().set("timeout", timeout(s));
            case 2 -> NODES.objectNode().set("binary_data_output", anyScalar(s));
            default -> anyScalar(s);
        });
        JsonNode outputs = source.orNull(0.7, s -> switch (s.between(0, 2)) {
            case 0 -> NODES.arrayNode().add(NODES.objectNode().put("name", s.pick("embedding", "logits", "")));
            case 1 -> NODES.arrayNode().add(NODES.objectNode().put("name", "y")
                    .set("parameters", NODES.objectNode().set("binary_data", anyScalar(s))));
            default -> anyScalar(s);
        });
        JsonNode id = source.orNull(0.7, DecoderFuzzTest::anyScalar);
        String field = source.orNull(0.9, s -> s.pick("inputs", "input", "id", "extra"));
        ObjectNode body = NODES.objectNode();
        if (!"inputs".equals(field)) { // "inputs" here means: leave the inputs out
            body.putArray("inputs").addAll(inputs);
        }
        if (parameters != null) {
            body.set("parameters", parameters);
        }
        if (outputs != null) {
            body.set("outputs", outputs);
        }
        if (id != null) {
            body.set("id", id);
        }
        if (field != null && !"inputs".equals(field)) {
            body.put(field, 1);
        }
        return body;
    }

    /** One input whose fields are each valid or mutated; with data that matches its shape more often than not. */
    private static ObjectNode input(Source source, boolean allowMutations) {
        JsonNode name = switch (source.frequency(8, 1, 1)) {
            case 0 -> TextNode.valueOf(source.pick("text", "x", "input_ids", "a", "", "é\u0000\uD83D\uDE00"));
            case 1 -> TextNode.valueOf(source.string(0, 40));
            default -> anyScalar(source);
        };
        JsonNode datatype = switch (source.frequency(8, 1, 1)) {
            case 0 -> TextNode.valueOf(source.pick(DATATYPES));
            case 1 -> TextNode.valueOf(source.pick("FP16", "fp32", "UINT8", "BYTES ", ""));
            default -> anyScalar(source);
        };
        JsonNode shape = switch (source.frequency(10, 1, 1)) {
            case 0 -> array(source.list(0, 4, DecoderFuzzTest::dim));
            case 1 -> array(source.list(5, 40, DecoderFuzzTest::dim));
            default -> anyScalar(source);
        };
        int how = source.between(0, 9);
        String drop = source.orNull(0.8, s -> s.pick("parameters", "data", "shape", "datatype", "name", "extra"));
        ObjectNode input = NODES.objectNode();
        input.set("name", name);
        input.set("datatype", datatype);
        input.set("shape", shape);
        input.set("data", data(source, datatype, shape, how));
        if (allowMutations && drop != null) {
            if (drop.equals("extra")) {
                input.put("extra", true);
            } else if (drop.equals("parameters")) {
                input.putObject("parameters").put("binary_data_size", how * 4 - 4);
            } else {
                input.remove(drop);
            }
        }
        return input;
    }

    private static ObjectNode validInput(Source source) {
        String name = source.string(1, 8, ALPHANUMERIC);
        String datatype = source.pick(DATATYPES);
        List<Long> dims = source.list(0, 3, s -> s.between(0L, 4L));
        int count = (int) Tensor.elementCount(dims.stream().mapToLong(Long::longValue).toArray());
        List<JsonNode> elements = source.listOfSize(count, s -> element(s, datatype));
        ObjectNode input = NODES.objectNode().put("name", name).put("datatype", datatype);
        ArrayNode shape = input.putArray("shape");
        dims.forEach(shape::add);
        input.set("data", nest(elements, dims));
        return input;
    }

    private static final String ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    /**
     * Data for an input: how = 0..5 matches the shape (nested or flat) with elements of its datatype, 6 has one
     * element too few, 7 holds elements of any type, 8 is deeply nested, 9 is a scalar.
     */
    private static JsonNode data(Source source, JsonNode datatype, JsonNode shape, int how) {
        String type = datatype.isTextual() ? datatype.textValue() : "FP32";
        long count = elementCount(shape);
        if (how <= 6 && count >= 0 && count <= 256) {
            int n = (int) (how == 6 ? Math.max(0, count - 1) : count);
            List<Long> dims = new ArrayList<>();
            shape.forEach(dim -> dims.add(dim.asLong()));
            boolean nested = how % 2 == 0 && how != 6;
            List<JsonNode> elements = source.listOfSize(n, s -> element(s, type));
            return nested ? nest(elements, dims) : array(elements);
        }
        return switch (how) {
            case 8 -> {
                int depth = source.between(1, 1_200);
                JsonNode node = NODES.numberNode(1);
                for (int i = 0; i < depth; i++) {
                    node = NODES.arrayNode().add(node);
                }
                yield node;
            }
            case 9 -> anyScalar(source);
            default -> array(source.list(0, 5, s -> s.bool() ? element(s, type) : anyScalar(s)));
        };
    }

    /** The elements of the shape, -1 when it is not an array of small non-negative integers. */
    private static long elementCount(JsonNode shape) {
        if (!shape.isArray()) {
            return -1;
        }
        long count = 1;
        for (JsonNode dim : shape) {
            if (!dim.isIntegralNumber() || !dim.canConvertToLong() || dim.asLong() < 0 || dim.asLong() > 256) {
                return -1;
            }
            count *= dim.asLong();
            if (count > 256) {
                return -1;
            }
        }
        return count;
    }

    private static JsonNode nest(List<JsonNode> elements, List<Long> dims) {
        if (dims.isEmpty()) {
            return elements.isEmpty() ? NODES.arrayNode() : elements.getFirst();
        }
        if (dims.size() == 1 || elements.isEmpty()) {
            return array(elements);
        }
        int rows = (int) (long) dims.getFirst();
        int per = rows == 0 ? 0 : elements.size() / rows;
        ArrayNode out = NODES.arrayNode();
        for (int r = 0; r < rows; r++) {
            out.add(nest(elements.subList(r * per, (r + 1) * per), dims.subList(1, dims.size())));
        }
        return out;
    }

    /** A valid element of a datatype (edge values included). */
    private static JsonNode element(Source source, String datatype) {
        return switch (datatype) {
            case "BOOL" -> NODES.booleanNode(source.bool());
            case "INT32" -> NODES.numberNode(source.anyInt());
            case "INT64" -> NODES.numberNode(source.anyLong());
            case "FP32", "FP64" -> switch (source.between(0, 7)) {
                case 0 -> NODES.numberNode(1e308);
                case 1 -> NODES.numberNode(-0.0);
                case 2 -> NODES.numberNode(3);
                case 3 -> NODES.numberNode(Double.MIN_VALUE);
                default -> NODES.numberNode(source.anyDouble());
            };
            default -> NODES.textNode(source.string(0, 16));
        };
    }

    // --- binary extension --------------------------------------------------------------------------------------------

    /** A body with the binary tensor data extension and the {@code Inference-Header-Content-Length} it was sent with. */
    record BinaryBody(ObjectNode header, byte[] bytes, String headerLength) {
        @Override
        public String toString() {
            int json = write(header).length;
            return "Inference-Header-Content-Length " + (headerLength == null ? "absent" : "'" + headerLength + "'")
                    + ", body of " + bytes.length + " bytes: the JSON header ("  + json + " bytes) "
                    + Fuzz.truncate(new String(bytes, 0, json, StandardCharsets.UTF_8), Fuzz.SHOW_CHARS)
                    + " then in hex " + HexFormat.of().formatHex(bytes, json, Math.min(bytes.length, json + 2_048))
                    + (bytes.length > json + 2_048 ? "..." : "");
        }
    }

    /** One input's part of a binary body: its JSON and the bytes it contributes after the header. */
    private record BinaryInput(ObjectNode json, byte[] payload) {
    }

    static BinaryBody oipBinaryBody(Source source) {
        List<BinaryInput> list = source.frequency(10, 1) == 0
                ? source.list(1, 4, DecoderFuzzTest::binaryInput)
                : source.list(5, 100, DecoderFuzzTest::binaryInput);
        int lie = source.between(0, 12);
        int delta = source.between(-8, 8);
        ObjectNode body = NODES.objectNode();
        ArrayNode array = body.putArray("inputs");
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        for (BinaryInput input : list) {
            array.add(input.json());
            payload.writeBytes(input.payload());
        }
        byte[] header = write(body);
        byte[] bytes = new byte[header.length + payload.size()];
        System.arraycopy(header, 0, bytes, 0, header.length);
        System.arraycopy(payload.toByteArray(), 0, bytes, header.length, payload.size());
        String headerLength = switch (lie) {
            case 0 -> Integer.toString(header.length + delta);
            case 1 -> null;
            case 2 -> Long.toString(Integer.MAX_VALUE + 1L);
            case 3 -> "-1";
            case 4 -> " " + header.length + " ";
            case 5 -> "0x" + Integer.toHexString(header.length);
            case 6 -> "";
            default -> Integer.toString(header.length);
        };
        return new BinaryBody(body, bytes, headerLength);
    }

    private static BinaryInput binaryInput(Source source) {
        String name = source.pick("a", "b", "c", "text", "x");
        String datatype = source.pick(DATATYPES);
        List<Long> dims = source.frequency(8, 1) == 0
                ? source.list(1, 3, s -> s.between(0L, 6L))
                : source.pick(SHAPES_BEYOND_ANY_BODY);
        int lie = source.between(0, 12);
        byte[] random = source.bytes(64);
        byte[] strings = bytesElements(source);
        long count = 1; // saturates at 2^21: only small counts get a payload of the right size
        for (long dim : dims) {
            count = count > 1 << 20 || dim > 1 << 20 ? 1 << 21 : count * dim;
        }
        int size = switch (datatype) {
            case "BOOL" -> 1;
            case "INT32", "FP32" -> 4;
            case "INT64", "FP64" -> 8;
            default -> -1;
        };
        byte[] payload;
        if (size < 0) {
            payload = strings;
        } else if ((lie < 7 || lie > 8) && count * size <= 4_096) {
            payload = Arrays.copyOf(random, (int) (count * size));
        } else {
            payload = random;
        }
        JsonNode declared = switch (lie) {
            case 7 -> NODES.numberNode(payload.length + 1);
            case 8 -> NODES.numberNode(-1);
            case 9 -> NODES.numberNode(Integer.MAX_VALUE);
            case 10 -> NODES.numberNode(1L << 32);
            case 11 -> NODES.numberNode(payload.length + 0.5);
            case 12 -> NODES.textNode(Integer.toString(payload.length));
            default -> NODES.numberNode(payload.length);
        };
        ObjectNode json = NODES.objectNode().put("name", name).put("datatype", datatype);
        ArrayNode shape = json.putArray("shape");
        dims.forEach(shape::add);
        json.putObject("parameters").set("binary_data_size", declared);
        return new BinaryInput(json, payload);
    }

    /** BYTES in the binary extension: elements each with a 4-byte little-endian length that may lie. */
    private static byte[] bytesElements(Source source) {
        List<byte[]> elements = source.list(0, 6, s -> {
            byte[] text = s.string(0, 12).getBytes(StandardCharsets.UTF_8);
            int prefix = switch (s.between(0, 9)) {
                case 6 -> text.length + 1;
                case 7 -> -1;
                case 8 -> Integer.MAX_VALUE;
                case 9 -> Integer.MIN_VALUE;
                default -> text.length;
            };
            ByteBuffer buffer = ByteBuffer.allocate(4 + text.length).order(ByteOrder.LITTLE_ENDIAN);
            buffer.putInt(prefix).put(text);
            return buffer.array();
        });
        int cut = source.between(0, 3);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        elements.forEach(out::writeBytes);
        byte[] all = out.toByteArray();
        return cut == 0 && all.length > 2 ? Arrays.copyOf(all, all.length - 2) : all; // ends mid-element
    }

    // --- raw and mutated bytes ---------------------------------------------------------------------------------------

    static byte[] rawBody(Source source) {
        return source.bool()
                ? source.bytes(512)
                : source.string(0, 256, "{}[]\":,0123456789-.eE \ntrufalsn\\u").getBytes(StandardCharsets.UTF_8);
    }

    /** An {@code Inference-Header-Content-Length}: null (none) three times in ten, else a number or not quite one. */
    static String headerLength(Source source) {
        return source.orNull(0.3, s -> s.bool()
                ? Integer.toString(s.between(-4, 600))
                : s.pick("", " ", "1e3", "2147483648", "-2147483648", "٣", "+5", "0x10"));
    }

    /** Valid-looking bodies as text, then truncated, a byte replaced, a span deleted or a key duplicated. */
    static byte[] mutatedOipJsonText(Source source) {
        byte[] text = oipJsonBody(source).bytes();
        int op = source.between(0, 3);
        int at = (int) (source.unit() * text.length);
        byte value = source.anyByte();
        return switch (op) {
            case 0 -> Arrays.copyOf(text, at);
            case 1 -> {
                byte[] out = text.clone();
                if (at < out.length) {
                    out[at] = value;
                }
                yield out;
            }
            case 2 -> {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                out.write(text, 0, at);
                int skip = Math.min(text.length, at + 1 + (value & 0x1f));
                out.write(text, skip, text.length - skip);
                yield out.toByteArray();
            }
            default -> new String(text, StandardCharsets.UTF_8)
                    .replaceFirst("\\{\"name\":(\"[^\"]*\")", "{\"name\":$1,\"name\":$1")
                    .getBytes(StandardCharsets.UTF_8);
        };
    }

    // --- OpenAI embeddings ---------------------------------------------------------------------------------------------

    static JsonBody embeddingsBody(Source source) {
        Fuzz.Gen<JsonNode> text = s -> switch (s.frequency(12, 1, 1, 1)) {
            case 0 -> TextNode.valueOf(s.string(1, 20));
            case 1 -> TextNode.valueOf("");
            case 2 -> anyScalar(s);
            default -> array(s.list(0, 4, t -> NODES.numberNode(t.between(0, 50_000))));
        };
        JsonNode model = source.orNull(0.05, s -> switch (s.frequency(10, 1, 1)) {
            case 0 -> TextNode.valueOf(s.pick("all-minilm-l6-v2", "m"));
            case 1 -> TextNode.valueOf("");
            default -> anyScalar(s);
        });
        JsonNode input = source.orNull(0.05, s -> switch (s.frequency(4, 4, 1)) {
            case 0 -> text.next(s);
            case 1 -> array(s.list(0, 6, text));
            default -> array(s.list(7, 2_000, text));
        });
        JsonNode format = source.orNull(0.6, s -> s.frequency(6, 1) == 0
                ? TextNode.valueOf(s.pick("float", "base64", "Float", ""))
                : anyScalar(s));
        JsonNode dimensions = source.orNull(0.4, s -> switch (s.frequency(3, 3, 1)) {
            case 0 -> NODES.numberNode(s.between(-2, 2_000));
            case 1 -> hugeInteger(s);
            default -> anyScalar(s);
        });
        JsonNode user = source.orNull(0.8, s -> s.bool() ? TextNode.valueOf(s.string(0, 8)) : anyScalar(s));
        String extra = source.orNull(0.9, s -> s.pick("extra", "inputs"));
        ObjectNode body = NODES.objectNode();
        putIfPresent(body, "model", model);
        putIfPresent(body, "input", input);
        putIfPresent(body, "encoding_format", format);
        putIfPresent(body, "dimensions", dimensions);
        putIfPresent(body, "user", user);
        putIfPresent(body, extra, extra == null ? null : NODES.numberNode(1));
        return JsonBody.of(body);
    }

    // --- shared generators ---------------------------------------------------------------------------------------------

    /** Shapes declaring far more elements than any tiny body holds, up to and past Java's largest array. */
    private static final List<List<Long>> SHAPES_BEYOND_ANY_BODY = List.of(
            List.of(2_147_483_639L), List.of(2_147_483_647L), List.of(1L << 31), List.of(1L << 30),
            List.of(100_000_000L), List.of(1L << 20), List.of(46_341L, 46_341L), List.of(65_536L, 32_768L),
            List.of(1_000L, 1_000L, 1_000L), List.of(1L, 2_147_483_639L), List.of(0L, Long.MAX_VALUE),
            List.of(Long.MAX_VALUE), List.of(3L, 715_827_882L));

    /** One dimension: mostly small, sometimes large, huge, negative or not an integer at all. */
    private static JsonNode dim(Source source) {
        return switch (source.frequency(12, 2, 2, 1)) {
            case 0 -> NODES.numberNode(source.between(0L, 4L));
            case 1 -> NODES.numberNode(source.between(5L, 1_000L));
            case 2 -> hugeInteger(source);
            default -> anyScalar(source);
        };
    }

    /** An integer at or past the int and long ranges, including ones whose low 64 bits are small (2^64 + 1). */
    private static JsonNode hugeInteger(Source source) {
        return switch (source.between(0, 13)) {
            case 0 -> NODES.numberNode(2_147_483_639L);
            case 1 -> NODES.numberNode(2_147_483_647L);
            case 2 -> NODES.numberNode(2_147_483_648L);
            case 3 -> NODES.numberNode(4_294_967_296L);
            case 4 -> NODES.numberNode(4_294_967_297L);
            case 5 -> NODES.numberNode(Long.MAX_VALUE);
            case 6 -> NODES.numberNode(Long.MIN_VALUE);
            case 7 -> NODES.numberNode(-1L);
            case 8 -> NODES.numberNode(-2_147_483_648L);
            case 9 -> new BigIntegerNode(BigInteger.ONE.shiftLeft(63));
            case 10 -> new BigIntegerNode(BigInteger.ONE.shiftLeft(64).add(BigInteger.ONE));
            case 11 -> new BigIntegerNode(BigInteger.ONE.shiftLeft(64).add(BigInteger.valueOf(384)));
            case 12 -> new BigIntegerNode(BigInteger.ONE.shiftLeft(65).add(BigInteger.TWO));
            default -> new BigIntegerNode(BigInteger.TEN.pow(30));
        };
    }

    /** Any JSON scalar or a small container of the wrong kind (a new node each time). */
    private static JsonNode anyScalar(Source source) {
        return switch (source.between(0, 10)) {
            case 0 -> NODES.nullNode();
            case 1 -> NODES.booleanNode(true);
            case 2 -> NODES.numberNode(0);
            case 3 -> NODES.numberNode(-1);
            case 4 -> NODES.numberNode(1.5);
            case 5 -> NODES.numberNode(1e308);
            case 6 -> NODES.textNode("2");
            case 7 -> NODES.textNode("");
            case 8 -> NODES.arrayNode();
            case 9 -> NODES.objectNode();
            default -> NODES.arrayNode().add(NODES.nullNode());
        };
    }

    private static JsonNode timeout(Source source) {
        return switch (source.frequency(2, 2, 1)) {
            case 0 -> NODES.numberNode(source.between(-1, Long.MAX_VALUE));
            case 1 -> hugeInteger(source);
            default -> anyScalar(source);
        };
    }

    private static JsonNode array(List<? extends JsonNode> elements) {
        return NODES.arrayNode().addAll(elements);
    }

    private static void putIfPresent(ObjectNode body, String field, JsonNode value) {
        if (field != null && value != null) {
            body.set(field, value);
        }
    }

    /** Writes bodies nested deeper than Jackson writes by default (the decoder must refuse them, not the test). */
    private static final ObjectMapper WRITER = new ObjectMapper(JsonFactory.builder()
            .streamWriteConstraints(StreamWriteConstraints.builder().maxNestingDepth(100_000).build()).build());

    static byte[] write(JsonNode body) {
        try {
            return WRITER.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // --- decoded values are what the body says -------------------------------------------------------------------------

    private static void checkFaithful(ObjectNode body, OipRequest request) {
        JsonNode inputs = body.get("inputs");
        assertEquals(inputs.size(), request.inputs().size(), "inputs");
        for (int i = 0; i < inputs.size(); i++) {
            JsonNode input = inputs.get(i);
            Tensor tensor = request.inputs().tensors().get(i);
            assertEquals(input.get("name").textValue(), tensor.name(), "name of input " + i);
            assertEquals(input.get("datatype").textValue(), tensor.datatype().name(), "datatype of input " + i);
            List<BigInteger> declared = new ArrayList<>();
            input.get("shape").forEach(dim -> declared.add(dim.bigIntegerValue()));
            List<BigInteger> decoded = Arrays.stream(tensor.shape()).mapToObj(BigInteger::valueOf).toList();
            assertEquals(declared, decoded, "shape of input " + i + " in " + body);
        }
        JsonNode timeout = body.path("parameters").path("timeout");
        if (timeout.isNumber()) {
            assertEquals(timeout.decimalValue().stripTrailingZeros(),
                    new java.math.BigDecimal(request.timeoutMicros()).stripTrailingZeros(),
                    "parameters.timeout decoded as " + request.timeoutMicros() + " from " + timeout);
        }
    }

    private static void checkFaithful(ObjectNode body, EmbeddingsRequest request) {
        assertEquals(body.get("model").textValue(), request.model(), "model");
        JsonNode dimensions = body.get("dimensions");
        if (dimensions != null && dimensions.isNumber()) {
            assertEquals(dimensions.decimalValue().stripTrailingZeros(),
                    new java.math.BigDecimal(request.dimensions()).stripTrailingZeros(),
                    "dimensions decoded as " + request.dimensions() + " from " + dimensions);
        }
        JsonNode input = body.get("input");
        List<String> texts = new ArrayList<>();
        if (input.isTextual()) {
            texts.add(input.textValue());
        } else {
            input.forEach(element -> texts.add(element.textValue()));
        }
        assertEquals(texts, request.texts(), "texts");
    }
}
