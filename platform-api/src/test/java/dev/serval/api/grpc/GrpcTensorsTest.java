package dev.serval.api.grpc;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.serval.api.grpc.v2.ModelInferRequest;
import dev.serval.api.http.RequestLimits;
import dev.serval.error.InvalidInput;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class GrpcTensorsTest {

    /** Bytes this thread has allocated so far (HotSpot's count, exact enough to tell a 64 MiB array from none). */
    static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /**
     * A 50-byte message declaring 16,777,216 BYTES elements (within serval.http.max-tensor-elements) with raw
     * contents of 5 bytes: each element takes at least its 4-byte length, so 5 bytes hold at most one. The count is
     * bounded by the bytes sent before anything is allocated from it (it used to allocate a 64 MiB String[16777216]
     * on the event loop first).
     */
    @Test
    void rawBytesElementsAreBoundedByTheBytesSentBeforeAnyArrayIsMade() {
        ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("m")
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("text").setDatatype("BYTES")
                        .addShape(1 << 24))
                .addRawInputContents(ByteString.copyFrom(new byte[] {1, 0, 0, 0, 'a'})).build();
        RequestLimits limits = RequestLimits.defaults();
        GrpcTensors.inputs(ModelInferRequest.newBuilder(request).setInputs(0, request.getInputs(0).toBuilder()
                .setShape(0, 1)).build(), limits); // warm: classes loaded, nothing to do with the count

        long before = allocated();
        InvalidInput refused = assertThrows(InvalidInput.class, () -> GrpcTensors.inputs(request, limits));
        long taken = allocated() - before;

        assertTrue(refused.getMessage().contains("16777216") && refused.getMessage().contains("5 bytes"),
                refused.getMessage());
        assertTrue(taken < 1 << 20, "allocated " + taken + " bytes for a 50-byte message");
    }
}
