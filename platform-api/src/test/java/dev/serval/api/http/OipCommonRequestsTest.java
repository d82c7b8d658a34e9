package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The fast path's form on the bodies Serval's own users send (the README's request, the load benchmark's), and what it
 * leaves to the full decoder. That it decodes exactly what the full decoder does is {@code DecoderFuzzTest}'s
 * property.
 */
class OipCommonRequestsTest {

    private static final OipCommonRequests COMMON = new OipCommonRequests(new ObjectMapper().getFactory(),
            RequestLimits.defaults());

    private static OipRequest decode(String body) {
        return COMMON.decode(body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theReadmesRequestTakesTheFastPath() {
        OipRequest request = decode("{\"id\":\"42\",\"inputs\":[{\"name\":\"text\",\"datatype\":\"BYTES\","
                + "\"shape\":[2],\"data\":[\"Hello, world!\",\"How do I reset my password?\"]}]}");
        assertNotNull(request);
        assertEquals("42", request.id());
        Tensor text = request.inputs().tensors().getFirst();
        assertEquals("text", text.name());
        assertEquals(DataType.BYTES, text.datatype());
        assertArrayEquals(new long[] {2}, text.shape());
        assertArrayEquals(new String[] {"Hello, world!", "How do I reset my password?"}, (String[]) text.data());
        assertNull(request.outputs());
        assertEquals(-1, request.timeoutMicros());
    }

    @Test
    void theNoopBenchmarksRequestTakesTheFastPathWithItsFlatDataOfARank2Shape() {
        OipRequest request = decode(
                "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3,4]}]}");
        assertNotNull(request);
        Tensor x = request.inputs().tensors().getFirst();
        assertArrayEquals(new long[] {1, 4}, x.shape());
        assertArrayEquals(new float[] {1, 2, 3, 4}, (float[]) x.data());
    }

    @Test
    void everythingElseIsLeftToTheFullDecoder() {
        String input = "{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1,2]}";
        for (String body : new String[] {
            "{\"inputs\":[" + input + "],\"parameters\":{\"timeout\":5}}", // parameters
            "{\"inputs\":[" + input + "],\"outputs\":[{\"name\":\"y\"}]}", // outputs
            "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,2],\"data\":[[1,2]]}]}", // nested data
            "{\"inputs\":[{\"name\":\"x\",\"data\":[1,2],\"datatype\":\"FP32\",\"shape\":[2]}]}", // data first
            "{\"inputs\":[{\"name\":\"x\",\"name\":\"y\",\"datatype\":\"FP32\",\"shape\":[2],\"data\":[1,2]}]}",
            "{\"inputs\":[" + input + "," + input + "]}", // the same name twice
            "{\"inputs\":[" + input + "]} {}", // a second value
            "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[3],\"data\":[1,2]}]}", // too few
            "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"INT32\",\"shape\":[1],\"data\":[2147483648]}]}", // range
            "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[2147483639],\"data\":[]}]}", // huge
            "{\"inputs\":[" + input, // truncated
            "",
        }) {
            assertNull(decode(body), body);
        }
    }
}
