package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.spec.DeploymentFields.Field;
import dev.serval.spec.DeploymentFields.Presence;
import dev.serval.spec.DeploymentFields.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The table of deployment fields: what it writes is the spec records' defaults, docs/configuration.md lists every field
 * with that default, and every key is reachable by its dotted path.
 */
class DeploymentFieldsTest {

    private static final Path DOCS = Path.of("../docs/configuration.md");
    /** A row of a fields table: | `key` | default | meaning |. */
    /** The commented sample config at the repository's root. */
    private static final Path EXAMPLE = Path.of("../serval.example.yaml");
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z_]+)` \\| ([^|]+) \\|");

    @Test
    void theDocumentedTableListsEveryFieldWithTheRecordsDefault() throws IOException {
        Map<String, String> documented = documentedRows("## Deployment fields");
        Map<String, Object> defaults = DeploymentFields.defaults(Section.DEPLOYMENT);

        assertEquals(DeploymentFields.in(Section.DEPLOYMENT).stream().map(Field::key).sorted().toList(),
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
        Map<String, Object> defaults = DeploymentFields.defaults(Section.AUTOSCALING);

        List<Field<?>> fields = DeploymentFields.in(Section.AUTOSCALING);
        assertEquals(fields.stream().map(Field::key).toList(), List.copyOf(documented.keySet()),
                "the documented autoscaling fields, in order");
        for (Field<?> field : fields) {
            String expected = field.presence() == Presence.OPTIONAL ? "(none)" : "`" + defaults.get(field.key()) + "`";
            assertEquals(expected, documented.get(field.key()), field.key());
        }
    }

    @Test
    void aDefaultSpecIsWrittenWithEveryFieldsDefault() {
        Map<String, Object> map = DeploymentFields.toMap(DeploymentSpec.defaults("noop", "noop"));
        DeploymentFields.defaults(Section.DEPLOYMENT).forEach((key, value) -> assertEquals(value, map.get(key), key));
    }

    @ParameterizedTest
    @CsvSource({"num_replicas, DEPLOYMENT", "max_model_memory, MULTIPLEX", "autoscaling.min_replicas, AUTOSCALING",
            "autoscaling.downscale_to_zero_delay, AUTOSCALING"})
    void everyFieldIsNamedByItsDottedPath(String path, Section section) {
        Field<?> field = DeploymentFields.named(path);
        assertEquals(section, field.section());
        assertEquals(path, field.path());
        assertNull(DeploymentFields.named(field.key().equals(path) ? "autoscaling." + path : field.key()),
                "the key alone names no field of another section");
    }

    @Test
    void replicaCountsAreBoundedTighterThanTheEngineInEverySection() {
        InvalidSpec fixed = assertThrows(InvalidSpec.class,
                () -> DeploymentFields.NUM_REPLICAS.read(IntNode.valueOf(65), null));
        assertEquals("num_replicas", fixed.field());
        assertEquals("must be between 0 and 64, not 65", fixed.problem());
        InvalidSpec autoscaled = assertThrows(InvalidSpec.class,
                () -> DeploymentFields.MAX_REPLICAS_FIELD.read(IntNode.valueOf(65), null));
        assertEquals("autoscaling.max_replicas", autoscaled.field());
        assertTrue(DeploymentSpec.NUM_REPLICAS.contains(65), "the engine itself takes more");
    }

    @Test
    void maxPendingTokensIsReadWithinItsRangeAndWrittenWithItsDefault() {
        Field<?> field = DeploymentFields.named("max_pending_tokens");

        assertEquals(1_048_576, DeploymentFields.defaults(Section.DEPLOYMENT).get("max_pending_tokens"));
        assertEquals(5_000, field.read(IntNode.valueOf(5_000), null));
        InvalidSpec refused = assertThrows(InvalidSpec.class, () -> field.read(IntNode.valueOf(0), null));
        assertEquals("max_pending_tokens", refused.field());
        assertEquals("must be between 1 and 1000000000, not 0", refused.problem());
        DeploymentSpec spec = DeploymentSpec.defaults("d", "m");
        assertEquals(5_000, DeploymentFields.toMap(spec.withAdmission(spec.admission().withMaxPendingTokens(5_000)))
                .get("max_pending_tokens"));
    }

    @ParameterizedTest
    @CsvSource({"400us, PT0.0004S", "2ms, PT0.002S", "30, PT30S", "30s, PT30S", "1m, PT1M", "2H, PT2H", "1d, PT24H",
            "1.5s, PT1.5S", "PT30S, PT30S", "1M30S, PT1M30S", "' 10s ', PT10S"})
    void durationsAreReadAsQuarkusReadsTheServersOwnSettings(String text, String expected) {
        assertEquals(Duration.parse(expected), DurationRange.parse(text));
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
                assertNull(rows.put(row.group(1), row.group(2).trim()), "documented twice: " + row.group(1));
            }
        }
        return rows;
    }

    @Test
    void theExampleConfigSetsEveryField() throws IOException {
        JsonNode example = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(EXAMPLE));
        Set<String> set = new TreeSet<>();
        for (JsonNode deployment : example.get("deployments")) {
            deployment.fieldNames().forEachRemaining(key -> {
                JsonNode value = deployment.get(key);
                if (value.isObject()) {
                    value.fieldNames().forEachRemaining(nested -> set.add(key + "." + nested));
                } else {
                    set.add(key);
                }
            });
        }
        Set<String> every = new TreeSet<>();
        every.add("name");
        DeploymentFields.ALL.forEach(field -> every.add(field.path()));

        assertEquals(every, set, "the fields serval.example.yaml sets (a field added to the table goes into it)");
    }
}
