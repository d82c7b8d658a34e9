package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.spec.DeploymentFields.Field;
import dev.serval.spec.DeploymentFields.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The {@code cache} section, read through the one field table from YAML, properties and API patches. */
class CacheConfigTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private static DeploymentSpec yaml(String text, DeploymentSpec base) throws IOException {
        return DeploymentConfig.read("d", YAML.readTree(text), base);
    }

    @Test
    void isOnWithTheDefaultBoundUnlessTold() throws IOException {
        assertEquals(CacheSpec.DEFAULTS, yaml("model: m", null).cache());
        assertEquals(new CacheSpec(true, 64L << 20), CacheSpec.DEFAULTS);
    }

    @Test
    void readsAMappingAndTheOffAndOnScalars() throws IOException {
        assertEquals(new CacheSpec(true, 1L << 20), yaml("{model: m, cache: {max_bytes: 1Mi}}", null).cache());
        assertFalse(yaml("{model: m, cache: off}", null).cache().enabled());
        assertFalse(yaml("{model: m, cache: false}", null).cache().enabled());
        assertFalse(yaml("{model: m, cache: {enabled: false}}", null).cache().enabled());
        DeploymentSpec off = yaml("{model: m, cache: {max_bytes: 2Mi, enabled: false}}", null);
        assertEquals(new CacheSpec(true, 2L << 20), yaml("{cache: on}", off).cache(), "a patch turns it on, size kept");
        assertEquals(off.cache(), yaml("{num_replicas: 2}", off).cache(), "a patch without it keeps it");
    }

    @Test
    void refusesAnUnknownFieldAndABoundOutOfRangeNamingTheKey() {
        InvalidSpec unknown = assertThrows(InvalidSpec.class, () -> yaml("{model: m, cache: {max-bytes: 1Mi}}", null));
        assertEquals("cache.max-bytes", unknown.field());
        assertTrue(unknown.getMessage().contains("did you mean 'max_bytes'"), unknown.getMessage());
        InvalidSpec small = assertThrows(InvalidSpec.class, () -> yaml("{model: m, cache: {max_bytes: 10}}", null));
        assertEquals("cache.max_bytes", small.field());
        InvalidSpec word = assertThrows(InvalidSpec.class, () -> yaml("{model: m, cache: maybe}", null));
        assertEquals("cache", word.field());
    }

    @Test
    void readsProperties() {
        assertEquals(new CacheSpec(true, 16L << 20), DeploymentConfig.fromProperties("d",
                Map.of("model", "m", "cache.max-bytes", "16Mi")).cache());
        assertFalse(DeploymentConfig.fromProperties("d", Map.of("model", "m", "cache", "OFF")).cache().enabled());
        assertEquals(new CacheSpec(false, 8L << 20), DeploymentConfig.fromProperties("d",
                Map.of("model", "m", "cache", "off", "cache.max-bytes", "8Mi")).cache(), "merged, in any order");
        assertEquals(CacheSpec.DEFAULTS, DeploymentConfig.fromProperties("d", Map.of("model", "m", "cache", "on"))
                .cache());
    }

    @Test
    void writesItsSettingsForTheApiAndTheStateFileAndReadsThemBack() throws IOException {
        DeploymentSpec spec = yaml("{model: m, cache: {max_bytes: 1Mi, enabled: false}}", null);

        Map<String, Object> map = DeploymentConfig.toMap(spec);

        assertEquals(Map.of("enabled", false, "max_bytes", 1L << 20), map.get("cache"));
        JsonNode written = YAML.valueToTree(map);
        assertEquals(spec, DeploymentConfig.read("d", written, null));
    }

    @Test
    void theDocumentedCacheTableListsEveryFieldWithTheRecordsDefault() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("../docs/configuration.md"));
        int start = lines.indexOf("### Result cache");
        assertTrue(start >= 0, "docs/configuration.md has a '### Result cache' section");
        Pattern row = Pattern.compile("^\\| `([a-z_]+)` \\| ([^|]+) \\|");
        Map<String, String> documented = new LinkedHashMap<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("#")) {
                break;
            }
            Matcher matcher = row.matcher(line);
            if (matcher.find()) {
                documented.put(matcher.group(1), matcher.group(2).trim());
            }
        }
        Map<String, Object> defaults = DeploymentFields.defaults(Section.CACHE);
        assertEquals(DeploymentFields.in(Section.CACHE).stream().map(Field::key).toList(),
                List.copyOf(documented.keySet()));
        for (Map.Entry<String, String> entry : documented.entrySet()) {
            assertEquals("`" + defaults.get(entry.getKey()) + "`", entry.getValue(), entry.getKey());
        }
    }
}
