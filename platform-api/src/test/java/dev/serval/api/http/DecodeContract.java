package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.error.InvalidInput;
import dev.serval.tensor.Tensor;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a request decoder owes any body a client can send, checked around one decode: it returns a well-formed request
 * or refuses with {@link InvalidInput} or an {@link ApiError} below 500 — never another exception, never an
 * {@link OutOfMemoryError} — and its work is bounded by what was received: it allocates at most
 * {@link #ALLOCATION_BASE} plus {@link #ALLOCATION_PER_BODY_BYTE} bytes per body byte (measured on the calling thread,
 * so never sized from a client-declared shape or length), within {@link #TIME_BASE_NANOS} plus
 * {@link #TIME_PER_BODY_BYTE_NANOS} per byte of wall time (generous: the machine is shared; the allocation bound is
 * the precise one). Shared by {@link DecoderFuzzTest} and {@link DecoderRegressionTest}.
 */
final class DecodeContract {

    /** Jackson's per-parse buffers and a handful of small objects. */
    static final long ALLOCATION_BASE = 1 << 20;
    /** The JSON tree, the flattened element list and the tensor arrays of a body are a few times its size. */
    static final long ALLOCATION_PER_BODY_BYTE = 64;
    static final long TIME_BASE_NANOS = 2_000_000_000L;
    static final long TIME_PER_BODY_BYTE_NANOS = 2_000;

    static final ObjectMapper MAPPER = new ObjectMapper();
    static final Json JSON = new Json(MAPPER);
    static final OipRequestDecoder OIP = new OipRequestDecoder(JSON, RequestLimits.defaults());
    /** The decoder with a tensor limit far above the default, for the linear-time checks of many inputs. */
    static final OipRequestDecoder OIP_MANY_TENSORS =
            new OipRequestDecoder(JSON, new RequestLimits(1_000_000, 16L << 20, 2048));
    static final OpenAiEmbeddings OPENAI = new OpenAiEmbeddings(JSON, new JsonFactory(), RequestLimits.defaults());

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static {
        // The first decodes load and initialise classes (Jackson's, the exceptions'): not the decoders' own cost.
        for (int i = 0; i < 50; i++) {
            for (String body : new String[] {"{\"inputs\":[{\"name\":\"t\",\"datatype\":\"BYTES\",\"shape\":[1],"
                    + "\"data\":[\"a\"]}]}", "{\"model\":\"m\",\"input\":[\"a\"]}", "{", "\u0000\u00ff", "[]", ""}) {
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                try {
                    OIP.decode(bytes, null);
                } catch (RuntimeException refused) {
                    // warming up the refusals too
                }
                try {
                    OPENAI.decode(bytes);
                } catch (RuntimeException refused) {
                    // warming up the refusals too
                }
            }
        }
    }

    private DecodeContract() {
    }

    /** Decodes an Open Inference Protocol body; returns the request, or null when it was refused as it should be. */
    static OipRequest oip(byte[] body, String headerLength) {
        return oip(OIP, body, headerLength);
    }

    /** The same with another decoder (other limits). */
    static OipRequest oip(OipRequestDecoder decoder, byte[] body, String headerLength) {
        OipRequest request = run(body, () -> decoder.decode(body, headerLength)).request();
        if (request != null) {
            checkWellFormed(request);
        }
        return request;
    }

    /** Decodes an Open Inference Protocol body that must be refused; returns the refusal (a 4xx, as the contract says). */
    static RuntimeException oipRefusal(byte[] body, String headerLength) {
        Outcome<OipRequest> outcome = run(body, () -> OIP.decode(body, headerLength));
        if (outcome.refusal() == null) {
            throw new AssertionError("accepted, not refused: " + show(body));
        }
        return outcome.refusal();
    }

    static OipRequest oip(String body) {
        return oip(body.getBytes(StandardCharsets.UTF_8), null);
    }

    /** Decodes an OpenAI embeddings body; returns the request, or null when it was refused as it should be. */
    static EmbeddingsRequest embeddings(byte[] body) {
        EmbeddingsRequest request = run(body, () -> OPENAI.decode(body)).request();
        if (request != null) {
            assertNotNull(request.model(), "model");
            assertTrue(!request.model().isEmpty(), "model is empty");
            assertTrue(!request.texts().isEmpty(), "no texts");
            request.texts().forEach(text -> assertTrue(text != null && !text.isEmpty(), "empty text"));
            assertTrue(request.dimensions() >= 0, "dimensions " + request.dimensions());
        }
        return request;
    }

    static EmbeddingsRequest embeddings(String body) {
        return embeddings(body.getBytes(StandardCharsets.UTF_8));
    }

    /** What one decode came to: the request, or (request null) the refusal. */
    private record Outcome<T>(T request, RuntimeException refusal) {
    }

    private static <T> Outcome<T> run(byte[] body, Supplier<T> decode) {
        long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
        long start = System.nanoTime();
        Outcome<T> result;
        try {
            result = new Outcome<>(decode.get(), null);
        } catch (InvalidInput refused) {
            result = new Outcome<>(null, refused);
        } catch (ApiError refused) {
            if (refused.status() >= 500) {
                throw new AssertionError("refused with status " + refused.status() + " (a server error): "
                        + refused.getMessage() + "; body " + show(body), refused);
            }
            result = new Outcome<>(null, refused);
        } catch (OutOfMemoryError e) {
            throw new AssertionError("OutOfMemoryError (" + e.getMessage() + ") decoding " + body.length
                    + " bytes: " + show(body), e);
        } catch (Throwable e) {
            throw new AssertionError("unexpected " + e + " decoding " + show(body), e);
        }
        long nanos = System.nanoTime() - start;
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
        long allowed = ALLOCATION_BASE + ALLOCATION_PER_BODY_BYTE * body.length;
        if (allocated > allowed) {
            throw new AssertionError("decoding " + body.length + " bytes allocated " + allocated + " bytes (at most "
                    + allowed + " allowed: the decoder sized something from a declared size): " + show(body));
        }
        long allowedNanos = TIME_BASE_NANOS + TIME_PER_BODY_BYTE_NANOS * body.length;
        if (nanos > allowedNanos) {
            throw new AssertionError("decoding " + body.length + " bytes took " + nanos / 1_000_000 + " ms (at most "
                    + allowedNanos / 1_000_000 + " ms allowed): " + show(body));
        }
        return result;
    }

    private static void checkWellFormed(OipRequest request) {
        assertNotNull(request.inputs(), "inputs");
        Set<String> names = new HashSet<>();
        for (Tensor tensor : request.inputs().tensors()) {
            assertTrue(names.add(tensor.name()), "input '" + tensor.name() + "' twice");
            for (long dim : tensor.shape()) {
                assertTrue(dim >= 0, "negative dimension in " + tensor);
            }
            assertEquals(Tensor.elementCount(tensor.shape()), tensor.size(), "elements of " + tensor);
        }
        if (request.outputs() != null) {
            request.outputs().forEach(output -> assertNotNull(output.name(), "output name"));
        }
        assertTrue(request.timeoutMicros() >= -1, "timeout " + request.timeoutMicros());
    }

    /** The body for a failure message: its length and text, truncated ({@link Fuzz#show(byte[])}). */
    static String show(byte[] body) {
        return Fuzz.show(body);
    }
}
