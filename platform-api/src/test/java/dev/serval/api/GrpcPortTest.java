package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.api.grpc.v2.GRPCInferenceServiceGrpc;
import dev.serval.api.grpc.v2.ServerLiveRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.net.URL;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** With {@code serval.grpc.port} set, gRPC is served on that port, and no longer on the HTTP port. */
@QuarkusTest
@TestProfile(GrpcPortProfile.class)
class GrpcPortTest {

    @TestHTTPResource("/")
    URL base;

    private static dev.serval.api.grpc.v2.ModelInferRequest text(String text) {
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.nio.ByteBuffer raw = java.nio.ByteBuffer.allocate(4 + bytes.length).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt(bytes.length).put(bytes);
        return dev.serval.api.grpc.v2.ModelInferRequest.newBuilder().setModelName(Serving.MODEL)
                .addInputs(dev.serval.api.grpc.v2.ModelInferRequest.InferInputTensor.newBuilder().setName("text")
                        .setDatatype("BYTES").addShape(1))
                .addRawInputContents(com.google.protobuf.ByteString.copyFrom(raw.array())).build();
    }

    @Test
    void theServiceMovesToItsOwnPort() throws InterruptedException {
        ManagedChannel own = ManagedChannelBuilder.forAddress("127.0.0.1", GrpcPortProfile.PORT).usePlaintext().build();
        ManagedChannel http = ManagedChannelBuilder.forAddress("127.0.0.1", base.getPort()).usePlaintext().build();
        try {
            assertTrue(GRPCInferenceServiceGrpc.newBlockingStub(own).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverLive(ServerLiveRequest.getDefaultInstance()).getLive());
            StatusRuntimeException elsewhere = assertThrows(StatusRuntimeException.class, () -> GRPCInferenceServiceGrpc
                    .newBlockingStub(http).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverLive(ServerLiveRequest.getDefaultInstance()));
            assertTrue(elsewhere.getStatus().getCode() != Status.Code.OK, elsewhere.getStatus().toString());
            assertEquals(true, elsewhere.getStatus().getCode() != Status.Code.DEADLINE_EXCEEDED,
                    "answered at once, not left hanging: " + elsewhere.getStatus());

            // Messages count in serval.http.max-buffered-bytes: one larger than what is left is refused, retryable.
            var stub = GRPCInferenceServiceGrpc.newBlockingStub(own).withDeadlineAfter(30, TimeUnit.SECONDS);
            StatusRuntimeException full = assertThrows(StatusRuntimeException.class, () -> stub.modelInfer(
                    text(new String(new char[100_000]).replace('\0', 'a'))));
            assertEquals(Status.Code.UNAVAILABLE, full.getStatus().getCode(), full.getStatus().toString());
            assertTrue(full.getStatus().getDescription().contains("serval.http.max-buffered-bytes"));
            assertEquals(384, stub.modelInfer(text("a short text")).getOutputs(0).getShape(1),
                    "the budget came back: a request that fits is served");
        } finally {
            own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            http.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
