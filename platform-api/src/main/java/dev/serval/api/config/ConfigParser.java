package dev.serval.api.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.quarkus.runtime.configuration.DurationConverter;
import dev.serval.api.config.DeploymentFields.Field;
import dev.serval.api.config.DeploymentFields.Refused;
import dev.serval.api.config.DeploymentFields.Values;
import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.InvalidSpec;
import dev.serval.spec.MultiplexSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads deployment configs from the YAML config file, the state file, management API bodies (JSON is YAML) and the
 * {@code serval.deployments.*} properties, all through one table of fields ({@code DeploymentFields}) into
 * {@link DeploymentSpec}s, with every field checked: an unknown key, a wrong type or a value out of bounds is an
 * {@link InvalidConfig} naming the source, the deployment and the field. A whole config is
 * {@code {"deployments": [ {name, model, ...}, ... ]}}; a field not given takes the spec's default.
 */
public final class ConfigParser {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Set<String> TOP_LEVEL = Set.of("deployments");
    private static final Set<String> FIELDS = fieldNames();

    private ConfigParser() {
    }

    /** Parses YAML or JSON text; {@code source} names it in errors (a path, or "PUT /api/config"). */
    public static JsonNode read(String text, String source) {
        try {
            JsonNode node = YAML.readTree(text);
            return node == null || node.isMissingNode() ? YAML.createObjectNode() : node; // empty or only comments
        } catch (IOException e) {
            String detail = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
            throw new InvalidConfig(source, null, null, "not valid YAML or JSON: " + detail);
        }
    }

    /** The deployments of a config file. */
    public static List<DeploymentSpec> readFile(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new InvalidConfig(file.toString(), null, null, "the file does not exist");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return deployments(read(text, file.toString()), file.toString());
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
            throw new InvalidConfig(source, null, "deployments", "must be a list of deployments");
        }
        List<DeploymentSpec> specs = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode entry = list.get(i);
            if (!entry.isObject()) {
                throw new InvalidConfig(source, null, "deployments[" + i + "]", "must be a mapping");
            }
            JsonNode name = entry.get("name");
            if (name == null || !name.isTextual()) {
                throw new InvalidConfig(source, null, "deployments[" + i + "].name", "is required (a string)");
            }
            DeploymentSpec spec = deployment(name.textValue(), entry, source);
            if (!names.add(spec.name())) {
                throw new InvalidConfig(source, spec.name(), "name", "the name appears twice");
            }
            specs.add(spec);
        }
        return specs;
    }

    /**
     * The deployments of the {@code serval.deployments.<name>.<key>} properties, by name then kebab-case key. Each
     * property's text is read as the config file's field of the same name in snake_case ({@code num-replicas} is
     * {@code num_replicas}), by the same rules; an absent property is the spec's default, an unknown one an error.
     * {@code autoscaling.<key>} properties ({@code autoscaling.min-replicas}) give the autoscaling block, which then
     * replaces {@code num-replicas} instead of conflicting with it (application.properties lists it for every
     * deployment, so that an environment variable can override it).
     */
    public static List<DeploymentSpec> fromProperties(Map<String, Map<String, String>> deployments) {
        List<DeploymentSpec> specs = new ArrayList<>();
        deployments.forEach((name, properties) -> {
            String source = "serval.deployments." + name;
            ObjectNode fields = YAML.createObjectNode();
            properties.forEach((key, text) -> {
                if (key.startsWith(AutoscalingFields.KEY + ".")) {
                    JsonNode settings = fields.get(AutoscalingFields.KEY);
                    ObjectNode autoscaling = settings instanceof ObjectNode object ? object : fields.putObject(
                            AutoscalingFields.KEY);
                    AutoscalingFields.fromProperty(key.substring(AutoscalingFields.KEY.length() + 1), text,
                            autoscaling, source, name);
                    return;
                }
                Field<?> field = DeploymentFields.named(key.replace('-', '_'));
                if (field == null) {
                    throw new InvalidConfig(source, name, key, "unknown property; known properties: "
                            + FIELDS.stream().filter(f -> !f.equals("name"))
                                    .map(f -> f.equals(AutoscalingFields.KEY) ? f + ".*" : f.replace('_', '-')).sorted()
                                    .toList());
                }
                fields.set(field.key(), field.kind().fromText(text));
            });
            if (fields.has(AutoscalingFields.KEY)) {
                // application.properties lists num-replicas for every deployment (so that an environment variable
                // can override it): as properties, autoscaling.* replaces it rather than conflicting with it.
                fields.remove(DeploymentFields.NUM_REPLICAS.key());
            }
            specs.add(deployment(name, fields, source));
        });
        return specs;
    }

    /**
     * One deployment. Fields not given take their defaults (the spec records').
     *
     * @param name the deployment's name; a {@code name} field in {@code node}, if any, must equal it
     */
    public static DeploymentSpec deployment(String name, JsonNode node, String source) {
        return read(name, node, null, source);
    }

    /** The spec {@code current} with the fields of {@code changes} replaced (a PATCH). */
    public static DeploymentSpec merge(DeploymentSpec current, JsonNode changes, String source) {
        return read(current.name(), changes, current, source);
    }

    /** The spec under its config-file keys, durations as text: what the API shows and the state file stores. */
    public static Map<String, Object> toMap(DeploymentSpec spec) {
        return DeploymentFields.toMap(spec);
    }

    /** YAML text of a whole config, as the state directory stores it. */
    public static String toYaml(List<DeploymentSpec> specs) {
        try {
            return YAML.writeValueAsString(Map.of("deployments", specs.stream().map(ConfigParser::toMap).toList()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * One deployment's fields over {@code base} (null: the defaults), checked field by field, then record by record.
     */
    private static DeploymentSpec read(String name, JsonNode node, DeploymentSpec base, String source) {
        if (!node.isObject()) {
            throw new InvalidConfig(source, name, null, "a deployment is a mapping of fields");
        }
        rejectUnknown(node, FIELDS, source, name);
        JsonNode nameField = node.get("name");
        if (nameField != null && !(nameField.isTextual() && nameField.textValue().equals(name))) {
            throw new InvalidConfig(source, name, "name", "is " + nameField + " but the deployment is '" + name + "'");
        }
        Values values = new Values();
        for (Field<?> field : DeploymentFields.ALL) {
            readField(field, node.get(field.key()), base, values, source, name);
        }
        boolean multiplexed = MultiplexSpec.isGlob(values.get(DeploymentFields.MODEL));
        for (Field<?> field : DeploymentFields.MULTIPLEX) {
            if (!multiplexed && node.has(field.key())) {
                throw new InvalidConfig(source, name, field.key(), "applies to a multiplexed deployment, whose model"
                        + " is a glob over the repository's model names such as 't-*'; '"
                        + values.get(DeploymentFields.MODEL) + "' names one model");
            }
            readField(field, node.get(field.key()), base != null && base.isMultiplexed() ? base : null, values,
                    source, name);
        }
        if (multiplexed && node.has(DeploymentFields.VERSION.key())) {
            throw new InvalidConfig(source, name, DeploymentFields.VERSION.key(), "a multiplexed deployment serves "
                    + "each model's newest version (a new version folder rolls that model); remove 'version'");
        }
        AutoscalingSpec autoscaling = autoscaling(node, base, source, name);
        DeploymentSpec spec;
        try {
            spec = DeploymentFields.spec(name, values).withAutoscaling(autoscaling);
        } catch (InvalidSpec e) {
            throw new InvalidConfig(source, name, e.field(), e.problem());
        }
        if (spec.health().minReadyReplicas() > spec.maxReplicas()) {
            throw new InvalidConfig(source, name, "min_ready_replicas", "is " + spec.health().minReadyReplicas()
                    + " but " + (spec.isAutoscaled() ? "autoscaling.max_replicas" : "num_replicas") + " is "
                    + spec.maxReplicas() + "; the deployment could never be ready");
        }
        return spec;
    }

    /**
     * The autoscaling settings of {@code node} over {@code base}'s: an {@code autoscaling} mapping turns it on (its
     * fields over the current settings, or the defaults), {@code autoscaling: null} or {@code num_replicas} alone
     * turn it off, neither keeps {@code base}'s; both together are refused, naming both.
     */
    private static AutoscalingSpec autoscaling(JsonNode node, DeploymentSpec base, String source, String name) {
        JsonNode settings = node.get(AutoscalingFields.KEY);
        boolean numReplicas = node.has(DeploymentFields.NUM_REPLICAS.key());
        if (settings != null && !settings.isNull() && numReplicas) {
            throw new InvalidConfig(source, name, AutoscalingFields.KEY, "autoscaling and num_replicas are both "
                    + "given; autoscaling replaces num_replicas (it sets the count between min_replicas and "
                    + "max_replicas): give one");
        }
        if (settings != null) {
            return settings.isNull() ? null
                    : AutoscalingFields.read(settings, base == null ? null : base.autoscaling(), source, name);
        }
        return numReplicas || base == null ? null : base.autoscaling();
    }

    private static <T> void readField(Field<T> field, JsonNode value, DeploymentSpec base, Values values,
            String source, String name) {
        try {
            values.put(field, value != null ? field.kind().read(value)
                    : base != null ? field.component().apply(base) : field.fallback());
        } catch (Refused e) {
            throw new InvalidConfig(source, name, field.key(), e.getMessage());
        }
    }

    private static Set<String> fieldNames() {
        Set<String> names = new HashSet<>();
        names.add("name");
        names.add(AutoscalingFields.KEY);
        DeploymentFields.ALL.forEach(field -> names.add(field.key()));
        DeploymentFields.MULTIPLEX.forEach(field -> names.add(field.key()));
        return Set.copyOf(names);
    }

    private static void rejectUnknown(JsonNode node, Set<String> known, String source, String deployment) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!known.contains(field)) {
                String snake = field.replace('-', '_');
                throw new InvalidConfig(source, deployment, field, "unknown field"
                        + (known.contains(snake) ? " (did you mean '" + snake + "'?)" : "; known fields: "
                        + known.stream().sorted().toList()));
            }
        }
    }
}
