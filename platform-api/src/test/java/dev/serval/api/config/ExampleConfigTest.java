package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.spec.DeploymentSpec;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The commented sample config at the repository's root, {@code serval.example.yaml}, is a config Serval accepts
 * (platform-core's DeploymentFieldsTest checks that it sets every field of the table).
 */
class ExampleConfigTest {

    @Test
    void theExampleConfigIsAccepted() {
        List<DeploymentSpec> deployments = ConfigParser.readFile(Path.of("..", "serval.example.yaml"));

        assertEquals(List.of("all-minilm-l6-v2", "minilm-autoscaled", "tenants"),
                deployments.stream().map(DeploymentSpec::name).toList());
    }
}
