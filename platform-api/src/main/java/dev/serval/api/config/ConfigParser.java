package dev.serval.api.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.spec.DeploymentConfig;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.InvalidSpec;
import dev.serval.error.Spelling;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Reads deployment configs from the YAML config file, the state file, management API bodies (JSON is YAML) and the
 * {@code serval.deployments.*} properties, and hands each deployment's mapping to the engine's one table of fields
 * ({@link DeploymentConfig}, which knows every key, default and bound) for a {@link DeploymentSpec}. What is refused
 * becomes an {@link InvalidConfig} naming the source, the deployment and the field. A whole config is
 * {@code {"deployments": [ {name, model, ...}, ... ]}}; a field not given takes the spec's default.
 */
public final class ConfigParser {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Set<String> TOP_LEVEL = Set.of("deployments");

    private ConfigParser() {
    }

    /** Parses YAML or JSON text; {@code source} names it in errors (a path, or "PUT /api/config"). */
    public static JsonNode read(String text, String source) {
        try {
            JsonNode node = YAML.readTree(text);
            return node == null || node.isMissingNode() ? YAML.createObjectNode() : node; // empty or only comments
        } catch (IOException e) {
            throw new InvalidConfig(source, null, null, "not valid YAML or JSON: " + firstLine(e));
        }
    }

    /** The first line of {@code e}'s message (Jackson adds the source and location on further lines). */
    private static String firstLine(IOException e) {
        String message = e instanceof JsonProcessingException json ? json.getOriginalMessage() : e.getMessage();
        return message == null ? e.toString() : message.lines().findFirst().orElse("");
    }

    /**
     * The deployments of a config file. A relative path is the working directory's (where the user started Serval).
     * A refusal names the file by its absolute path and, when the problem is in it, the line:
     * {@code /home/me/serval.yaml:5: deployment 'bert': field 'num_replica': unknown field (did you mean ...)}.
     */
    public static List<DeploymentSpec> readFile(Path file) {
        Path path = file.toAbsolutePath().normalize();
        String source = path.toString();
        String text;
        try {
            text = Files.readString(path);
        } catch (NoSuchFileException e) {
            throw new InvalidConfig(source, null, null, "the file does not exist");
        } catch (IOException e) {
            throw new InvalidConfig(source, null, null, "the file cannot be read: " + e);
        }
        JsonNode root;
        try {
            root = YAML.readTree(text);
        } catch (JsonProcessingException e) {
            JsonLocation location = e.getLocation();
            throw new InvalidConfig(location == null || location.getLineNr() < 1 ? source
                    : source + ":" + location.getLineNr(), null, null, "not valid YAML or JSON: " + firstLine(e));
        } catch (IOException e) {
            throw new InvalidConfig(source, null, null, "not valid YAML or JSON: " + firstLine(e));
        }
        try {
            return deployments(root == null || root.isMissingNode() ? YAML.createObjectNode() : root, source);
        } catch (InvalidConfig e) {
            if (e.pointer() == null) {
                throw e;
            }
            Map<String, Integer> lines = lines(text);
            Integer line = lines.get(located(e.pointer(), lines));
            throw line == null ? e : e.from(source + ":" + line);
        }
    }

    /** The deployments of a whole config ({@code deployments:} list); names must be unique. */
    public static List<DeploymentSpec> deployments(JsonNode root, String source) {
        if (!root.isObject()) {
            throw new InvalidConfig(source, null, null, "a config is a mapping with a 'deployments' list");
        }
        rejectUnknown(root, TOP_LEVEL, source, null);
        JsonNode list = root.get("deployments");
        if (list == null || list.isNull()) {
            return List.of();
        }
        if (!list.isArray()) {
            throw new InvalidConfig(source, null, "deployments", "must be a list of deployments").at("/deployments");
        }
        List<DeploymentSpec> specs = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode entry = list.get(i);
            String at = "/deployments/" + i;
            if (!entry.isObject()) {
                throw new InvalidConfig(source, null, "deployments[" + i + "]", "must be a mapping").at(at);
            }
            JsonNode name = entry.get("name");
            if (name == null || !name.isTextual()) {
                throw new InvalidConfig(source, null, "deployments[" + i + "].name", "is required (a string)")
                        .at(at + "/name");
            }
            DeploymentSpec spec;
            try {
                spec = deployment(name.textValue(), entry, source);
            } catch (InvalidConfig e) {
                throw e.at(e.field() == null ? at : at + "/" + pointer(e.field()));
            }
            if (!names.add(spec.name())) {
                throw new InvalidConfig(source, spec.name(), "name", "the name appears twice").at(at + "/name");
            }
            specs.add(spec);
        }
        return specs;
    }

    /**
     * The deployments of the {@code serval.deployments.<name>.<key>} properties, by name then kebab-case key, each
     * read by the deployment's field table ({@link DeploymentConfig#fromProperties}): {@code num-replicas} is the
     * file's {@code num_replicas}, {@code autoscaling.min-replicas} its {@code autoscaling.min_replicas}.
     */
    public static List<DeploymentSpec> fromProperties(Map<String, Map<String, String>> deployments) {
        List<DeploymentSpec> specs = new ArrayList<>();
        deployments.forEach((name, properties) -> {
            String prefix = "serval.deployments." + name;
            try {
                specs.add(DeploymentConfig.fromProperties(name, properties));
            } catch (InvalidSpec e) {
                if (e.field() == null) {
                    throw InvalidConfig.property(prefix, null, null, e.problem());
                }
                String key = e.field().replace('_', '-'); // a value's refusal names the snake_case field
                throw InvalidConfig.property(prefix + "." + key, properties.get(key), e.field(), e.problem());
            }
        });
        return specs;
    }

    /**
     * One deployment. Fields not given take their defaults (the spec records').
     *
     * @param name the deployment's name; a {@code name} field in {@code node}, if any, must equal it
     */
    public static DeploymentSpec deployment(String name, JsonNode node, String source) {
        return checked(source, name, () -> DeploymentConfig.read(name, node, null));
    }

    /** The spec {@code current} with the fields of {@code changes} replaced (a PATCH). */
    public static DeploymentSpec merge(DeploymentSpec current, JsonNode changes, String source) {
        return checked(source, current.name(), () -> DeploymentConfig.read(current.name(), changes, current));
    }

    /** The spec under its config-file keys, durations as text: what the API shows and the state file stores. */
    public static Map<String, Object> toMap(DeploymentSpec spec) {
        return DeploymentConfig.toMap(spec);
    }

    /** YAML text of a whole config, as the state directory stores it. */
    public static String toYaml(List<DeploymentSpec> specs) {
        try {
            return YAML.writeValueAsString(Map.of("deployments", specs.stream().map(ConfigParser::toMap).toList()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The spec {@code read} gives; a refused field is an {@link InvalidConfig} naming the source and deployment. */
    private static DeploymentSpec checked(String source, String name, Supplier<DeploymentSpec> read) {
        try {
            return read.get();
        } catch (InvalidSpec e) {
            throw new InvalidConfig(source, name, e.field(), e.problem());
        }
    }

    private static void rejectUnknown(JsonNode node, Set<String> known, String source, String deployment) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!known.contains(field)) {
                throw new InvalidConfig(source, deployment, field,
                        Spelling.unknown("field", "fields", field, known.stream().sorted().toList())).at("/" + pointer(field));
            }
        }
    }

    /** The JSON Pointer segments of a field's dotted path ({@code autoscaling.min_replicas}). */
    private static String pointer(String dotted) {
        return dotted.replace("~", "~0").replace("/", "~1").replace('.', '/');
    }

    /**
     * The line on which each value of {@code text} (YAML that parsed) starts, by JSON Pointer
     * ({@code /deployments/0/num_replicas}; a list entry's is its first key's line).
     */
    private static Map<String, Integer> lines(String text) {
        Map<String, Integer> lines = new HashMap<>();
        try (JsonParser parser = YAML.getFactory().createParser(text)) {
            while (parser.nextToken() != null) {
                lines.putIfAbsent(parser.getParsingContext().pathAsPointer().toString(),
                        parser.currentTokenLocation().getLineNr());
            }
        } catch (IOException e) {
            return lines; // it parsed as a tree already; whatever was located is still right
        }
        return lines;
    }

    /** {@code pointer}, or its nearest ancestor that {@code lines} knows (a field not given: its deployment's). */
    private static String located(String pointer, Map<String, Integer> lines) {
        String at = pointer;
        while (!lines.containsKey(at) && !at.isEmpty()) {
            at = at.substring(0, at.lastIndexOf('/'));
        }
        return at;
    }
}
