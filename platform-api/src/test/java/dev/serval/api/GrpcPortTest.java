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
        } finally {
            own.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            http.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
