package dev.serval.api;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Serval with a management token and a state directory, serving the default MiniLM; tests add deployments. The
 * dashboard's data needs the token too ({@code serval.ui.require-token}: DashboardTokenTest).
 */
public class ManagementProfile implements QuarkusTestProfile {

    static final String TOKEN = "test-token-7f3a";
    static final Path STATE_DIR = Path.of("target", "test-state");

    @Override
    public Map<String, String> getConfigOverrides() {
        TestRepository.install();
        try {
            // A state file left by an earlier run would be re-applied at startup: start from the properties.
            Files.deleteIfExists(STATE_DIR.resolve("applied-config.yaml"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.of(
                "serval.api.token", TOKEN,
                "serval.api.auth-enabled", "true",
                "serval.state-dir", STATE_DIR.toString(),
                "serval.ui.require-token", "true",
                "quarkus.http.read-timeout", "2s");
    }

    @Override
    public String getConfigProfile() {
        return "test";
    }
}
