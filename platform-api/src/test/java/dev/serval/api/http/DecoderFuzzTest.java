package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
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
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tag;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * Fuzzes the request decoders ({@link OipRequestDecoder}, JSON and the binary tensor data extension, and
 * {@link OpenAiEmbeddings#decode}) with structured bodies — valid-looking requests with mutated shapes, datatypes, data,
 * nesting, names and binary sizes — and with raw bytes. Each body must meet {@link DecodeContract}: a well-formed
 * request or a 4xx refusal, never another exception or an {@link OutOfMemoryError}, work bounded by the body's size;
 * and what is decoded must be what the body says (no number silently truncated).
 *
 * <p>How many tries: the Maven property {@code jqwik.tries.default} in platform-api/pom.xml (a few hundred,
 * seconds in {@code bin/test}); longer on demand with {@code -Djqwik.tries.default=100000} (docs/testing.md). Runs in
 * its own Surefire fork with a 512 MB heap (execution {@code decoder-fuzz} in platform-api/pom.xml), so that a decoder
 * sizing an allocation from a declared shape fails at once instead of taking gigabytes of a shared machine. A minimal
 * counterexample becomes a plain test in {@link DecoderRegressionTest}.
 */
@Tag("decoder-fuzz") // runs in its own small-heap fork (platform-api/pom.xml)
class DecoderFuzzTest {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final List<String> DATATYPES = List.of("BOOL", "INT32", "INT64", "FP32", "FP64", "BYTES");

    // --- properties ------------------------------------------------------------------------------------------------

    @Property
    void oipJsonBodiesDecodeToWhatTheySayOrAreRefused(@ForAll("oipJsonBodies") JsonBody body) {
        OipRequest request = DecodeContract.oip(body.bytes(), null);
        if (request != null) {
            checkFaithful(body.tree(), request);
        }
    }

    @Property
    void validOipJsonBodiesDecode(@ForAll("validOipJsonBodies") JsonBody body) {
        OipRequest request = DecodeContract.oip(body.bytes(), null);
        if (request == null) {
            throw new AssertionError("a valid request was refused: " + body);
        }
        checkFaithful(body.tree(), request);
    }

    @Property
    void mutatedOipJsonTextIsDecodedOrRefused(@ForAll("mutatedOipJsonText") byte[] body) {
        DecodeContract.oip(body, null);
    }

    @Property
    void oipBinaryBodiesAreDecodedOrRefused(@ForAll("oipBinaryBodies") BinaryBody body) {
        OipRequest request = DecodeContract.oip(body.bytes(), body.headerLength());
        if (request != null) {
            for (JsonNode input : body.header().get("inputs")) {
                JsonNode size = input.path("parameters").path("binary_data_size");
                if (!size.isMissingNode() && !size.isIntegralNumber()) {
                    throw new AssertionError("binary_data_size " + size + " was accepted: " + body);
                }
            }
        }
    }

    @Property
    void rawBytesAreDecodedOrRefusedByTheOipDecoder(@ForAll("rawBodies") byte[] body, @ForAll("headerLengths") String header) {
        DecodeContract.oip(body, header);
    }

    @Property
    void embeddingsBodiesDecodeToWhatTheySayOrAreRefused(@ForAll("embeddingsBodies") JsonBody body) {
        EmbeddingsRequest request = DecodeContract.embeddings(body.bytes());
        if (request != null) {
            checkFaithful(body.tree(), request);
        }
    }

    @Property
    void rawBytesAreDecodedOrRefusedByTheEmbeddingsDecoder(@ForAll("rawBodies") byte[] body) {
        DecodeContract.embeddings(body);
    }

    /**
     * The cheapest attack: a ~90-byte body declaring a tensor of billions of elements. Refusing it must cost nothing
     * like the declared size (the contract's allocation bound; its time bound says "quickly").
     */
    @Property(shrinking = ShrinkingMode.OFF)
    void aTinyBodyWithAnEnormousDeclaredShapeIsAnsweredQuickly(@ForAll("enormousShapes") List<Long> shape,
            @ForAll("datatypeNames") String datatype, @ForAll boolean binary) {
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

    /**
     * Many small inputs in one body: the work must grow with their number, not with its square (tens of thousands of
     * inputs fit in the default 8 MB body limit). Few tries: each body is megabytes.
     */
    @Property(tries = 4, shrinking = ShrinkingMode.OFF)
    void manyInputsDecodeInTimeLinearInTheirNumber(@ForAll @IntRange(min = 10_000, max = 30_000) int inputs) {
        byte[] body = manyInputs(inputs);
        long start = System.nanoTime();
        OipRequest request = DecodeContract.oip(body, null);
        long millis = (System.nanoTime() - start) / 1_000_000;
        long allowed = 500 + inputs / 50; // 20 µs per input on top of half a second (the square: seconds)
        if (request == null || millis > allowed) {
            throw new AssertionError(inputs + " inputs (" + body.length + " bytes) took " + millis + " ms, "
                    + (request == null ? "refused" : "decoded") + "; allowed " + allowed + " ms");
        }
    }

    static byte[] manyInputs(int count) {
        StringBuilder json = new StringBuilder(count * 56).append("{\"inputs\":[");
        for (int i = 0; i < count; i++) {
            json.append(i == 0 ? "" : ",").append("{\"name\":\"in").append(i)
                    .append("\",\"datatype\":\"FP32\",\"shape\":[1],\"data\":[0.5]}");
        }
        return json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    // --- OIP JSON bodies -------------------------------------------------------------------------------------------

    /** A generated JSON body: the tree (to compare the decoded request with) and its bytes (what is decoded). */
    record JsonBody(ObjectNode tree, byte[] bytes) {
        static JsonBody of(ObjectNode tree) {
            return new JsonBody(tree, write(tree));
        }

        @Override
        public String toString() {
            String text = new String(bytes, StandardCharsets.UTF_8);
            return text.length() <= 4_000 ? text : text.substring(0, 4_000) + "... (" + bytes.length + " bytes)";
        }
    }

    @Provide
    Arbitrary<JsonBody> oipJsonBodies() {
        // Half the inputs valid, so that mutations elsewhere in the request (its parameters) reach the decoder's end.
        return request(Arbitraries.oneOf(input(true), validInput())).map(JsonBody::of);
    }

    @Provide
    Arbitrary<JsonBody> validOipJsonBodies() {
        return Combinators.combine(validInput().list().ofMinSize(1).ofMaxSize(6)
                        .uniqueElements(input -> input.get("name").textValue()),
                Arbitraries.longs().between(0, Long.MAX_VALUE).injectNull(0.5))
                .as((inputs, timeout) -> {
                    ObjectNode body = NODES.objectNode();
                    body.putArray("inputs").addAll(inputs);
                    if (timeout != null) {
                        body.putObject("parameters").put("timeout", timeout);
                    }
                    return JsonBody.of(body);
                });
    }

    private static Arbitrary<ObjectNode> request(Arbitrary<ObjectNode> input) {
        Arbitrary<List<ObjectNode>> inputs = Arbitraries.frequencyOf(
                Tuple.of(10, input.list().ofMinSize(0).ofMaxSize(4)),
                Tuple.of(1, input.list().ofMinSize(5).ofMaxSize(400)));
        Arbitrary<JsonNode> parameters = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(NODES.objectNode())),
                Tuple.of(5, timeouts().map(t -> NODES.objectNode().set("timeout", t))),
                Tuple.of(1, anyScalar().map(v -> NODES.objectNode().set("binary_data_output", v))),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> outputs = Arbitraries.oneOf(
                Arbitraries.of("embedding", "logits", "").map(name -> (JsonNode) NODES.arrayNode()
                        .add(NODES.objectNode().put("name", name))),
                anyScalar().map(value -> (JsonNode) NODES.arrayNode()
                        .add(NODES.objectNode().put("name", "y").set("parameters",
                                NODES.objectNode().set("binary_data", value)))),
                anyScalar());
        return Combinators.combine(inputs, parameters.injectNull(0.4), outputs.injectNull(0.7),
                        anyScalar().injectNull(0.7), Arbitraries.of("inputs", "input", "id", "extra").injectNull(0.9))
                .as((list, params, outs, id, field) -> {
                    ObjectNode body = NODES.objectNode();
                    if (!"inputs".equals(field)) { // "inputs" here means: leave the inputs out
                        body.putArray("inputs").addAll(list);
                    }
                    if (params != null) {
                        body.set("parameters", params);
                    }
                    if (outs != null) {
                        body.set("outputs", outs);
                    }
                    if (id != null) {
                        body.set("id", id);
                    }
                    if (field != null && !"inputs".equals(field)) {
                        body.put(field, 1);
                    }
                    return body;
                });
    }

    /** One input whose fields are each valid or mutated; with data that matches its shape more often than not. */
    private static Arbitrary<ObjectNode> input(boolean allowMutations) {
        Arbitrary<JsonNode> name = Arbitraries.frequencyOf(
                Tuple.of(8, Arbitraries.of("text", "x", "input_ids", "a", "", "é\u0000\uD83D\uDE00")
                        .map(n -> (JsonNode) TextNode.valueOf(n))),
                Tuple.of(1, Arbitraries.strings().ofMaxLength(40).map(n -> (JsonNode) TextNode.valueOf(n))),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> datatype = Arbitraries.frequencyOf(
                Tuple.of(8, datatypes().map(n -> (JsonNode) TextNode.valueOf(n))),
                Tuple.of(1, Arbitraries.of("FP16", "fp32", "UINT8", "BYTES ", "").map(n -> (JsonNode) TextNode.valueOf(n))),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> shape = Arbitraries.frequencyOf(
                Tuple.of(10, dim().list().ofMaxSize(4).map(DecoderFuzzTest::array)),
                Tuple.of(1, dim().list().ofMinSize(5).ofMaxSize(40).map(DecoderFuzzTest::array)),
                Tuple.of(1, anyScalar()));
        return Combinators.combine(name, datatype, shape, Arbitraries.integers().between(0, 9),
                        Arbitraries.of("parameters", "data", "shape", "datatype", "name", "extra").injectNull(0.8))
                .flatAs((n, d, s, how, drop) -> data(d, s, how).map(data -> {
                    ObjectNode input = NODES.objectNode();
                    input.set("name", n);
                    input.set("datatype", d);
                    input.set("shape", s);
                    input.set("data", data);
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
                }));
    }

    private static Arbitrary<ObjectNode> validInput() {
        Arbitrary<List<Long>> shapes = Arbitraries.longs().between(0, 4).list().ofMaxSize(3);
        return Combinators.combine(Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(8),
                        datatypes(), shapes)
                .flatAs((name, datatype, dims) -> {
                    int count = (int) Tensor.elementCount(dims.stream().mapToLong(Long::longValue).toArray());
                    return element(datatype).list().ofSize(count).map(elements -> {
                        ObjectNode input = NODES.objectNode().put("name", name).put("datatype", datatype);
                        ArrayNode shape = input.putArray("shape");
                        dims.forEach(shape::add);
                        input.set("data", nest(elements, dims));
                        return input;
                    });
                });
    }

    /**
     * Data for an input: how = 0..5 matches the shape (nested or flat) with elements of its datatype, 6 has one
     * element too few, 7 holds elements of any type, 8 is deeply nested, 9 is a scalar.
     */
    private static Arbitrary<JsonNode> data(JsonNode datatype, JsonNode shape, int how) {
        String type = datatype.isTextual() ? datatype.textValue() : "FP32";
        long count = elementCount(shape);
        if (how <= 6 && count >= 0 && count <= 256) {
            int n = (int) (how == 6 ? Math.max(0, count - 1) : count);
            List<Long> dims = new ArrayList<>();
            shape.forEach(dim -> dims.add(dim.asLong()));
            boolean nested = how % 2 == 0 && how != 6;
            return element(type).list().ofSize(n).map(elements -> nested ? nest(elements, dims) : array(elements));
        }
        return switch (how) {
            case 8 -> Arbitraries.integers().between(1, 1_200).map(depth -> {
                JsonNode node = NODES.numberNode(1);
                for (int i = 0; i < depth; i++) {
                    node = NODES.arrayNode().add(node);
                }
                return node;
            });
            case 9 -> anyScalar();
            default -> Arbitraries.oneOf(element(type), anyScalar()).list().ofMaxSize(5).map(DecoderFuzzTest::array);
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

    /** Valid elements of a datatype (edge values included). */
    private static Arbitrary<JsonNode> element(String datatype) {
        return switch (datatype) {
            case "BOOL" -> Arbitraries.of(NODES.booleanNode(true), NODES.booleanNode(false));
            case "INT32" -> Arbitraries.integers().map(v -> (JsonNode) NODES.numberNode(v));
            case "INT64" -> Arbitraries.longs().map(v -> (JsonNode) NODES.numberNode(v));
            case "FP32", "FP64" -> Arbitraries.oneOf(
                    Arbitraries.doubles().map(v -> (JsonNode) NODES.numberNode(v)),
                    Arbitraries.of(NODES.numberNode(1e308), NODES.numberNode(-0.0), NODES.numberNode(3),
                            NODES.numberNode(Double.MIN_VALUE)));
            default -> Arbitraries.strings().ofMaxLength(16).map(v -> (JsonNode) NODES.textNode(v));
        };
    }

    // --- binary extension --------------------------------------------------------------------------------------------

    /** A body with the binary tensor data extension and the {@code Inference-Header-Content-Length} it was sent with. */
    record BinaryBody(ObjectNode header, byte[] bytes, String headerLength) {
        @Override
        public String toString() {
            int json = write(header).length;
            return "BinaryBody[Inference-Header-Content-Length=" + headerLength + ", " + bytes.length + " bytes: "
                    + new String(bytes, 0, json, StandardCharsets.UTF_8) + " then hex "
                    + HexFormat.of().formatHex(bytes, json, Math.min(bytes.length, json + 2_000)) + "]";
        }
    }

    /** One input's part of a binary body: its JSON and the bytes it contributes after the header. */
    private record BinaryInput(ObjectNode json, byte[] payload) {
    }

    @Provide
    Arbitrary<BinaryBody> oipBinaryBodies() {
        Arbitrary<List<BinaryInput>> inputs = Arbitraries.frequencyOf(
                Tuple.of(10, binaryInput().list().ofMinSize(1).ofMaxSize(4)),
                Tuple.of(1, binaryInput().list().ofMinSize(5).ofMaxSize(100)));
        return Combinators.combine(inputs, Arbitraries.integers().between(0, 12), Arbitraries.integers().between(-8, 8))
                .as((list, lie, delta) -> {
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
                });
    }

    private static Arbitrary<BinaryInput> binaryInput() {
        Arbitrary<String> names = Arbitraries.of("a", "b", "c", "text", "x");
        Arbitrary<List<Long>> shapes = Arbitraries.frequencyOf(
                Tuple.of(8, Arbitraries.longs().between(0, 6).list().ofMinSize(1).ofMaxSize(3)),
                Tuple.of(1, shapesBeyondAnyBody()));
        Arbitrary<byte[]> bytesPayload = bytesElements();
        return Combinators.combine(names, datatypes(), shapes, Arbitraries.integers().between(0, 12),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(64), bytesPayload)
                .as((name, datatype, dims, lie, random, strings) -> {
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
                });
    }

    /** BYTES in the binary extension: elements each with a 4-byte little-endian length that may lie. */
    private static Arbitrary<byte[]> bytesElements() {
        Arbitrary<byte[]> element = Combinators.combine(
                        Arbitraries.strings().ofMaxLength(12).map(s -> s.getBytes(StandardCharsets.UTF_8)),
                        Arbitraries.integers().between(0, 9))
                .as((text, lie) -> {
                    int prefix = switch (lie) {
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
        return Combinators.combine(element.list().ofMaxSize(6), Arbitraries.integers().between(0, 3))
                .as((elements, cut) -> {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    elements.forEach(out::writeBytes);
                    byte[] all = out.toByteArray();
                    return cut == 0 && all.length > 2 ? Arrays.copyOf(all, all.length - 2) : all; // ends mid-element
                });
    }

    // --- raw and mutated bytes ---------------------------------------------------------------------------------------

    @Provide
    Arbitrary<byte[]> rawBodies() {
        return Arbitraries.oneOf(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(512),
                Arbitraries.strings().withChars("{}[]\":,0123456789-.eE \ntrufalsn\\u").ofMaxLength(256)
                        .map(s -> s.getBytes(StandardCharsets.UTF_8)));
    }

    @Provide
    Arbitrary<String> headerLengths() {
        return Arbitraries.oneOf(
                Arbitraries.integers().between(-4, 600).map(Object::toString),
                Arbitraries.of("", " ", "1e3", "2147483648", "-2147483648", "٣", "+5", "0x10")).injectNull(0.3);
    }

    /** Valid-looking bodies as text, then truncated, a byte replaced, a span deleted or a key duplicated. */
    @Provide
    Arbitrary<byte[]> mutatedOipJsonText() {
        return Combinators.combine(oipJsonBodies(), Arbitraries.integers().between(0, 3),
                        Arbitraries.doubles().between(0, 1), Arbitraries.bytes())
                .as((body, op, where, value) -> {
                    byte[] text = body.bytes();
                    int at = (int) (where * text.length);
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
                });
    }

    // --- OpenAI embeddings ---------------------------------------------------------------------------------------------

    @Provide
    Arbitrary<JsonBody> embeddingsBodies() {
        Arbitrary<JsonNode> text = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.strings().ofMinLength(1).ofMaxLength(20).map(s -> (JsonNode) TextNode.valueOf(s))),
                Tuple.of(1, Arbitraries.just(TextNode.valueOf(""))),
                Tuple.of(1, anyScalar()),
                Tuple.of(1, Arbitraries.integers().between(0, 50_000).list().ofMaxSize(4)
                        .map(tokens -> array(tokens.stream().map(t -> (JsonNode) NODES.numberNode(t)).toList()))));
        Arbitrary<JsonNode> input = Arbitraries.frequencyOf(
                Tuple.of(4, text),
                Tuple.of(4, text.list().ofMaxSize(6).map(DecoderFuzzTest::array)),
                Tuple.of(1, text.list().ofMinSize(7).ofMaxSize(2_000).map(DecoderFuzzTest::array)));
        Arbitrary<JsonNode> model = Arbitraries.frequencyOf(
                Tuple.of(10, Arbitraries.of("all-minilm-l6-v2", "m").map(s -> (JsonNode) TextNode.valueOf(s))),
                Tuple.of(1, Arbitraries.just(TextNode.valueOf(""))),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> format = Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.of("float", "base64", "Float", "").map(s -> (JsonNode) TextNode.valueOf(s))),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> dimensions = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(-2, 2_000).map(d -> (JsonNode) NODES.numberNode(d))),
                Tuple.of(3, hugeIntegers()),
                Tuple.of(1, anyScalar()));
        Arbitrary<JsonNode> user = Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(8)
                .map(s -> (JsonNode) TextNode.valueOf(s)), anyScalar());
        return Combinators.combine(model.injectNull(0.05), input.injectNull(0.05), format.injectNull(0.6),
                        dimensions.injectNull(0.4), user.injectNull(0.8), Arbitraries.of("extra", "inputs").injectNull(0.9))
                .as((m, in, f, d, u, extra) -> {
                    ObjectNode body = NODES.objectNode();
                    putIfPresent(body, "model", m);
                    putIfPresent(body, "input", in);
                    putIfPresent(body, "encoding_format", f);
                    putIfPresent(body, "dimensions", d);
                    putIfPresent(body, "user", u);
                    putIfPresent(body, extra, extra == null ? null : NODES.numberNode(1));
                    return JsonBody.of(body);
                });
    }

    // --- shared generators ---------------------------------------------------------------------------------------------

    @Provide
    Arbitrary<String> datatypeNames() {
        return datatypes();
    }

    private static Arbitrary<String> datatypes() {
        return Arbitraries.of(DATATYPES);
    }

    /** Shapes declaring far more elements than any tiny body holds, up to and past Java's largest array. */
    @Provide
    Arbitrary<List<Long>> enormousShapes() {
        return shapesBeyondAnyBody();
    }

    private static Arbitrary<List<Long>> shapesBeyondAnyBody() {
        return Arbitraries.of(
                List.of(2_147_483_639L), List.of(2_147_483_647L), List.of(1L << 31), List.of(1L << 30),
                List.of(100_000_000L), List.of(1L << 20), List.of(46_341L, 46_341L), List.of(65_536L, 32_768L),
                List.of(1_000L, 1_000L, 1_000L), List.of(1L, 2_147_483_639L), List.of(0L, Long.MAX_VALUE),
                List.of(Long.MAX_VALUE), List.of(3L, 715_827_882L));
    }

    /** One dimension: mostly small, sometimes large, huge, negative or not an integer at all. */
    private static Arbitrary<JsonNode> dim() {
        return Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.longs().between(0, 4).map(d -> (JsonNode) NODES.numberNode(d))),
                Tuple.of(2, Arbitraries.longs().between(5, 1_000).map(d -> (JsonNode) NODES.numberNode(d))),
                Tuple.of(2, hugeIntegers()),
                Tuple.of(1, anyScalar()));
    }

    /** Integers at and past the int and long ranges, including ones whose low 64 bits are small (2^64 + 1). */
    private static Arbitrary<JsonNode> hugeIntegers() {
        return Arbitraries.of(NODES.numberNode(2_147_483_639L), NODES.numberNode(2_147_483_647L),
                NODES.numberNode(2_147_483_648L), NODES.numberNode(4_294_967_296L), NODES.numberNode(4_294_967_297L),
                NODES.numberNode(Long.MAX_VALUE), NODES.numberNode(Long.MIN_VALUE), NODES.numberNode(-1L),
                NODES.numberNode(-2_147_483_648L), new BigIntegerNode(BigInteger.ONE.shiftLeft(63)),
                new BigIntegerNode(BigInteger.ONE.shiftLeft(64).add(BigInteger.ONE)),
                new BigIntegerNode(BigInteger.ONE.shiftLeft(64).add(BigInteger.valueOf(384))),
                new BigIntegerNode(BigInteger.ONE.shiftLeft(65).add(BigInteger.TWO)),
                new BigIntegerNode(BigInteger.TEN.pow(30)));
    }

    /** Any JSON scalar or a small container of the wrong kind. */
    private static Arbitrary<JsonNode> anyScalar() {
        return Arbitraries.of(NODES.nullNode(), NODES.booleanNode(true), NODES.numberNode(0), NODES.numberNode(-1),
                NODES.numberNode(1.5), NODES.numberNode(1e308), NODES.textNode("2"), NODES.textNode(""),
                NODES.arrayNode(), NODES.objectNode(), NODES.arrayNode().add(NODES.nullNode()));
    }

    private static Arbitrary<JsonNode> timeouts() {
        return Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.longs().between(-1, Long.MAX_VALUE).map(t -> (JsonNode) NODES.numberNode(t))),
                Tuple.of(2, hugeIntegers()),
                Tuple.of(1, anyScalar()));
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
