package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * A deployment's defaults live in the spec records ({@code DEFAULTS}) and nowhere else; what repeats them for people
 * must say the same: the tables of docs/configuration.md (held to the field table by core's DeploymentFieldsTest),
 * the default deployment of application.properties (listed in full so that environment variables can override each
 * key) and the Helm chart's default deployment. They once drifted: {@code batch-wait-timeout} was 2 ms in the
 * properties and 0 s everywhere else.
 */
class DeploymentDefaultsTest {

    private static final Path PROPERTIES = Path.of("src/main/resources/application.properties");
    private static final Path CHART_VALUES = Path.of("../helm/serval/values.yaml");

    @Test
    void theDefaultDeploymentOfTheApplicationPropertiesIsTheSpecsDefaults() throws IOException {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(PROPERTIES)) {
            properties.load(reader);
        }
        Map<String, Map<String, String>> deployments = new LinkedHashMap<>();
        for (String key : properties.stringPropertyNames()) {
            if (key.startsWith("serval.deployments.")) {
                String[] parts = key.substring("serval.deployments.".length()).split("\\.", 2);
                deployments.computeIfAbsent(parts[0], name -> new LinkedHashMap<>())
                        .put(parts[1], properties.getProperty(key));
            }
        }
        assertEquals(List.of("all-minilm-l6-v2"), List.copyOf(deployments.keySet()));
        DeploymentSpec defaults = DeploymentSpec.defaults("all-minilm-l6-v2", "all-minilm-l6-v2");
        assertEquals(ConfigParser.toMap(defaults).keySet().stream().filter(key -> !key.equals("name"))
                        .map(key -> key.replace('_', '-')).sorted().toList(),
                deployments.get("all-minilm-l6-v2").keySet().stream().sorted().toList(),
                "every field is listed, so that an environment variable can override it");

        assertEquals(List.of(defaults), ConfigParser.fromProperties(deployments));
    }

    @Test
    void theChartsDefaultDeploymentIsTheSpecsDefaults() throws IOException {
        JsonNode values = new ObjectMapper(new YAMLFactory()).readTree(CHART_VALUES.toFile());
        JsonNode deployments = values.at("/serval/deployments");
        assertEquals(1, deployments.size(), "one default deployment");
        JsonNode deployment = deployments.get(0);
        String name = deployment.get("name").textValue();

        assertEquals(DeploymentSpec.defaults(name, deployment.get("model").textValue()),
                ConfigParser.deployment(name, deployment, CHART_VALUES.toString()));
    }
}
