package dev.serval.api;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Deployments from the YAML config file ({@code serval.config-file}) replace the {@code serval.deployments.*}
 * properties; a state directory's last applied config would win over both (see {@link StateDirectoryTest}).
 */
@QuarkusTest
@TestProfile(ConfigFileTest.FromFile.class)
class ConfigFileTest {

    static final Path DIR = Path.of("target", "test-config");

    public static class FromFile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            TestRepository.install();
            Path file = write("serval.yaml", """
                    # two deployments; the properties' all-minilm-l6-v2 is not started
                    deployments:
                      - name: echo-file
                        model: noop
                        predictor_threads: 1
                        max_batch_size: 4
                      - name: mlp-file
                        model: tiny-mlp
                        version: "2"
                        num_replicas: 2
                        predictor_threads: 1
                        request_timeout: 5s
                    """);
            return Map.of("serval.config-file", file.toString());
        }
    }

    static Path write(String name, String text) {
        try {
            Path file = DIR.resolve(name);
            Files.createDirectories(file.getParent());
            return Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theConfigFileDecidesTheDeployments() {
        Serving.awaitReady();
        given().get("/api/deployments").then().statusCode(200)
                .body("deployments.name", containsInAnyOrder("echo-file", "mlp-file"))
                .body("deployments.find { it.name == 'mlp-file' }.config.version", equalTo("2"))
                .body("deployments.find { it.name == 'mlp-file' }.config.request_timeout", equalTo("5s"))
                .body("deployments.find { it.name == 'mlp-file' }.replicas.running", equalTo(2))
                .body("deployments.find { it.name == 'echo-file' }.config.max_batch_size", equalTo(4));
        given().get("/v2/models/all-minilm-l6-v2").then().statusCode(404);
    }
}
