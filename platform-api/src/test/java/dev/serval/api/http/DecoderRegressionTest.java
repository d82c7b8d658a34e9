package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The minimal counterexamples {@link DecoderFuzzTest} found, each as the exact body it reported, checked against
 * {@link DecodeContract} (a well-formed request or a 4xx refusal, work bounded by the body's size) and against what
 * the body says. Runs in the {@code decoder-fuzz} Surefire fork (512 MB heap), so that an allocation sized from a
 * declared shape fails at once.
 */
@Tag("decoder-fuzz") // runs in its own small-heap fork (platform-api/pom.xml)
class DecoderRegressionTest {

    /**
     * 74 bytes declaring 2,147,483,639 elements (just under Java's largest array): the decoder sized a list from the
     * shape before looking at {@code data} — OutOfMemoryError; in the container image, which exits on OOM, one
     * request took the server down.
     */
    @Test
    void aShapeOfTwoBillionElementsWithNoDataIsRefusedWithoutAllocatingIt() {
        assertNull(DecodeContract.oip(
                "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"BOOL\",\"shape\":[2147483639],\"data\":[]}]}"));
    }

    /**
     * The same mistake below the OOM threshold (the next counterexample of the same property): a 77-byte body
     * declaring 2^20 elements must not cost megabytes before its empty {@code data} is seen.
     */
    @Test
    void aShapeOfAMillionElementsWithNoDataIsRefusedWithoutAllocatingForIt() {
        assertNull(DecodeContract.oip(
                "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1048576],\"data\":[]}]}"));
    }

    /** A timeout past the 64-bit range was truncated to its low 64 bits: 2^64 + 1 µs became 1 µs. */
    @Test
    void aTimeoutBeyondTheLongRangeIsRefusedNotTruncated() {
        OipRequest request = DecodeContract.oip("{\"inputs\":[],\"parameters\":{\"timeout\":18446744073709551617}}");
        assertNull(request, () -> "accepted with timeoutMicros " + request.timeoutMicros());
    }

    /** OpenAI {@code dimensions} past the 64-bit range passed the 1..1,000,000 check after truncation: 2^64 + 1 -> 1. */
    @Test
    void embeddingDimensionsBeyondTheLongRangeAreRefusedNotTruncated() {
        EmbeddingsRequest request = DecodeContract.embeddings(
                "{\"model\":\"all-minilm-l6-v2\",\"input\":\"\\u0000\",\"dimensions\":18446744073709551617}");
        assertNull(request, () -> "accepted with dimensions " + request.dimensions());
    }

    /**
     * A binary tensor data extension size that is not an integer was truncated and accepted: 0.5 read as 0. The body
     * is the JSON header alone, {@code Inference-Header-Content-Length: 93}.
     */
    @Test
    void aFractionalBinaryDataSizeIsRefused() {
        byte[] body = "{\"inputs\":[{\"name\":\"a\",\"datatype\":\"BOOL\",\"shape\":[0],\"parameters\":{\"binary_data_size\":0.5}}]}"
                .getBytes(StandardCharsets.UTF_8);
        assertEquals(93, body.length);
        assertNull(DecodeContract.oip(body, "93"));
    }

    /**
     * Input names were checked pairwise ({@code Tensors}, platform-core): 20,000 one-element inputs (1.2 MB, well
     * inside the 8 MB body limit) took 4-8 s of an event loop on this machine (30,000: 17 s); linear work takes a
     * fraction of a second. (The fuzzer found 13,011 inputs, 796 KB, taking 3.6 s.) With the default limits such a
     * body is refused at once, naming the limit (serval.http.max-tensors-per-request, 64)...
     */
    @Test
    void twentyThousandInputsAreRefusedQuicklyByTheDefaultTensorLimit() {
        byte[] body = DecoderFuzzTest.manyInputs(20_000);
        long start = System.nanoTime();
        RuntimeException refusal = DecodeContract.oipRefusal(body, null);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(refusal.getMessage().contains("serval.http.max-tensors-per-request"), refusal::getMessage);
        assertTrue(millis < 1_500, () -> "refusing 20,000 inputs took " + millis + " ms");
    }

    /** ...and where an operator raises the limit, they decode in linear time. */
    @Test
    void twentyThousandInputsDecodeInLinearTimeUnderARaisedTensorLimit() {
        byte[] body = DecoderFuzzTest.manyInputs(20_000);
        long start = System.nanoTime();
        OipRequest request = DecodeContract.oip(DecodeContract.OIP_MANY_TENSORS, body, null);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertNotNull(request, "refused");
        assertEquals(20_000, request.inputs().size());
        assertTrue(millis < 1_500, () -> "20,000 inputs took " + millis + " ms");
    }

    /** Sanity: the bodies above differ from a valid one only where they say. */
    @Test
    void theValidNeighbourOfEachCounterexampleDecodes() {
        assertNotNull(DecodeContract.oip(
                "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"BOOL\",\"shape\":[2],\"data\":[true,false]}],"
                        + "\"parameters\":{\"timeout\":1000}}"));
        assertEquals(384, DecodeContract.embeddings(
                "{\"model\":\"all-minilm-l6-v2\",\"input\":\"a\",\"dimensions\":384}"
                        .getBytes(StandardCharsets.UTF_8)).dimensions());
    }
}
