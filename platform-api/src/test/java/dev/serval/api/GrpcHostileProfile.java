package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;

/**
 * Serval serving its default model, with gRPC on the HTTP port, 4 s for a gRPC call's request to arrive
 * ({@code serval.http.body-timeout}), at most 4 gRPC calls open per connection
 * ({@code serval.grpc.max-calls-per-connection}) and 256 KiB of request bytes held per connection
 * ({@code serval.grpc.max-bytes-per-connection}): GrpcHostileTest.
 */
public class GrpcHostileProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("serval.http.body-timeout", "4s", "serval.grpc.max-calls-per-connection", "4",
                "serval.grpc.max-bytes-per-connection", "256K", "serval.ui.enabled", "false");
    }
}
