package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Map;

/**
 * Serval serving its default model, with the gRPC service on a port of its own ({@code serval.grpc.port}), and a
 * budget of 64 KiB of request bytes held ({@code serval.http.max-buffered-bytes}), and without the dashboard
 * ({@code serval.ui.enabled=false}: DashboardOffTest), and 5 s for a request body or gRPC message to arrive
 * ({@code serval.http.body-timeout}: StalledBodyTest, GrpcPortTest).
 */
public class GrpcPortProfile implements QuarkusTestProfile {

    /** Chosen once per JVM (a system property): the profile and the test see it from different class loaders. */
    static final int PORT = Integer.parseInt(System.getProperties()
            .computeIfAbsent("test.serval-grpc-port", key -> Integer.toString(freePort())).toString());

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("serval.grpc.port", Integer.toString(PORT), "serval.http.max-buffered-bytes", "64K",
                "serval.ui.enabled", "false", "serval.http.body-timeout", "5s");
    }
}
