package dev.serval.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A deployment's defaults live in the spec records ({@code DEFAULTS}) and nowhere else; what repeats them for people
 * must say the same: the table of docs/configuration.md, the default deployment of application.properties (listed in
 * full so that environment variables can override each key) and the Helm chart's default deployment. They once
 * drifted: {@code batch-wait-timeout} was 2 ms in the properties and 0 s everywhere else.
 */
class DeploymentDefaultsTest {

    private static final Path DOCS = Path.of("../docs/configuration.md");
    private static final Path PROPERTIES = Path.of("src/main/resources/application.properties");
    private static final Path CHART_VALUES = Path.of("../helm/serval/values.yaml");
    /** A row of the deployment fields table: | `key` | default | meaning |. */
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z_]+)` \\| ([^|]+) \\|");

    @Test
    void theDocumentedTableListsEveryFieldWithTheRecordsDefault() throws IOException {
        Map<String, String> documented = documentedDefaults();
        Map<String, Object> defaults = DeploymentFields.defaults();

        assertEquals(DeploymentFields.ALL.stream().map(DeploymentFields.Field::key).sorted().toList(),
                documented.keySet().stream().sorted().toList(), "the documented fields");
        for (Map.Entry<String, String> row : documented.entrySet()) {
            String key = row.getKey();
            if (key.equals("model")) {
                assertEquals("(required)", row.getValue(), key);
                assertFalse(defaults.containsKey(key), "model has no default");
            } else {
                assertEquals("`" + defaults.get(key) + "`", row.getValue(), key);
            }
        }
    }

    @Test
    void theDocumentedAutoscalingTableListsEveryFieldWithRaysDefault() throws IOException {
        Map<String, String> documented = documentedRows("### Autoscaling");
        Map<String, Object> defaults = AutoscalingFields.defaults();

        assertEquals(AutoscalingFields.ALL.stream().map(AutoscalingFields.Sub::key).toList(),
                List.copyOf(documented.keySet()), "the documented autoscaling fields, in order");
        for (AutoscalingFields.Sub<?> sub : AutoscalingFields.ALL) {
            String expected = sub.optional() ? "(none)" : "`" + defaults.get(sub.key()) + "`";
            assertEquals(expected, documented.get(sub.key()), sub.key());
        }
    }

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
        assertEquals(DeploymentFields.ALL.size(), deployments.get("all-minilm-l6-v2").size(),
                "every field is listed, so that an environment variable can override it");

        assertEquals(List.of(DeploymentSpec.defaults("all-minilm-l6-v2", "all-minilm-l6-v2")),
                ConfigParser.fromProperties(deployments));
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

    /** The rows of docs/configuration.md's "Deployment fields" table, by key, in order: the default as written. */
    private static Map<String, String> documentedDefaults() throws IOException {
        return documentedRows("## Deployment fields");
    }

    /** The rows of the first table under {@code heading}, up to the next heading. */
    private static Map<String, String> documentedRows(String heading) throws IOException {
        List<String> lines = Files.readAllLines(DOCS);
        int start = lines.indexOf(heading);
        assertTrue(start >= 0, "docs/configuration.md has a '" + heading + "' section");
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("#")) {
                break;
            }
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                assertEquals(null, rows.put(row.group(1), row.group(2).trim()), "documented twice: " + row.group(1));
            }
        }
        return rows;
    }
}
