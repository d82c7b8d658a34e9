package dev.serval.api.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.model.LongInputs;
import io.quarkus.runtime.configuration.DurationConverter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads deployment configs from the YAML config file, the state file and management API bodies (JSON is YAML), with
 * every field checked: an unknown key, a wrong type or a value out of bounds is an {@link InvalidConfig} naming the
 * source, the deployment and the field. A whole config is {@code {"deployments": [ {name, model, ...}, ... ]}}.
 */
public final class ConfigParser {

    /** Replicas one deployment may ask for (the server-wide thread bound is {@code serval.limits.*}). */
    public static final int MAX_REPLICAS = 64;
    /** Predictor threads, and ONNX Runtime intra-op threads, one replica may ask for. */
    public static final int MAX_THREADS = 64;

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?");
    private static final Set<String> TOP_LEVEL = Set.of("deployments");

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
    public static List<DeploymentConfig> readFile(Path file) {
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
    public static List<DeploymentConfig> deployments(JsonNode root, String source) {
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
        List<DeploymentConfig> configs = new ArrayList<>();
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
            DeploymentConfig config = deployment(name.textValue(), entry, source);
            if (!names.add(config.name())) {
                throw new InvalidConfig(source, config.name(), "name", "the name appears twice");
            }
            configs.add(config);
        }
        return configs;
    }

    /**
     * One deployment. Fields not given take their defaults ({@link DeploymentConfig#defaults()}).
     *
     * @param name the deployment's name; a {@code name} field in {@code node}, if any, must equal it
     */
    public static DeploymentConfig deployment(String name, JsonNode node, String source) {
        if (!node.isObject()) {
            throw new InvalidConfig(source, name, null, "a deployment is a mapping of fields");
        }
        ObjectNode fields = YAML.valueToTree(DeploymentConfig.defaults());
        Set<String> known = new HashSet<>(DeploymentConfig.defaults().keySet());
        known.add("name");
        known.add("model");
        rejectUnknown(node, known, source, name);
        node.fields().forEachRemaining(field -> fields.set(field.getKey(), field.getValue()));
        if (!NAME.matcher(name).matches()) {
            throw new InvalidConfig(source, name, "name", "must be 1-63 lower-case letters, digits, '.', '_' or '-', "
                    + "starting and ending with a letter or digit");
        }
        JsonNode nameField = fields.get("name");
        if (nameField != null && !(nameField.isTextual() && nameField.textValue().equals(name))) {
            throw new InvalidConfig(source, name, "name", "is " + nameField + " but the deployment is '" + name + "'");
        }
        Reader read = new Reader(fields, source, name);
        String model = read.text("model", true);
        int numReplicas = read.integer("num_replicas", 0, MAX_REPLICAS);
        int minReady = read.integer("min_ready_replicas", 0, MAX_REPLICAS);
        if (minReady > numReplicas) {
            throw new InvalidConfig(source, name, "min_ready_replicas", "is " + minReady + " but num_replicas is "
                    + numReplicas + "; the deployment could never be ready");
        }
        String longInputs = read.choice("long_inputs", "truncate", "chunk");
        int maxLength = read.integer("max_length", 0, 1_000_000);
        if (maxLength == 1) {
            throw new InvalidConfig(source, name, "max_length", "must be 0 (the model's own) or at least 2");
        }
        int chunkOverlap = read.integer("chunk_overlap", 0, 1_000_000);
        if (longInputs.equals("chunk") && maxLength > 0 && chunkOverlap > maxLength / 2) {
            throw new InvalidConfig(source, name, "chunk_overlap", "is " + chunkOverlap
                    + " but must be at most half of max_length (" + maxLength + ")");
        }
        DeploymentConfig config = new DeploymentConfig(
                name,
                model,
                read.text("version", false),
                maxLength,
                longInputs,
                chunkOverlap,
                read.choice("chunk_reduction", "mean", "max"),
                read.integer("max_chunks_per_input", 1, LongInputs.MAX_CHUNKS_LIMIT),
                numReplicas,
                minReady,
                read.integer("max_ongoing_requests", 1, 100_000),
                read.integer("max_queued_requests", 0, 100_000),
                read.integer("predictor_threads", 1, MAX_THREADS),
                read.integer("intra_op_threads", 1, MAX_THREADS),
                read.integer("max_inputs_per_request", 1, 100_000),
                read.duration("health_check_period", Duration.ofMillis(10), Duration.ofDays(1)),
                read.integer("health_check_failure_threshold", 1, 1000),
                read.duration("graceful_shutdown_timeout", Duration.ZERO, Duration.ofHours(1)),
                read.duration("request_timeout", Duration.ofMillis(1), Duration.ofHours(1)),
                read.bool("batch_invariance"),
                read.integer("max_batch_size", 1, 1024),
                read.duration("batch_wait_timeout", Duration.ZERO, Duration.ofSeconds(1)),
                read.fraction("rolling_update_fraction"));
        try {
            config.toSpec();
        } catch (IllegalArgumentException e) {
            throw new InvalidConfig(source, name, null, e.getMessage());
        }
        return config;
    }

    /** The config of {@code current} with the fields of {@code changes} replaced (a PATCH). */
    public static DeploymentConfig merge(DeploymentConfig current, JsonNode changes, String source) {
        if (!changes.isObject()) {
            throw new InvalidConfig(source, current.name(), null, "a deployment is a mapping of fields");
        }
        ObjectNode merged = YAML.valueToTree(current.toMap());
        changes.fields().forEachRemaining(field -> merged.set(field.getKey(), field.getValue()));
        return deployment(current.name(), merged, source);
    }

    /** YAML text of a whole config, as the state directory stores it. */
    public static String toYaml(List<DeploymentConfig> configs) {
        try {
            return YAML.writeValueAsString(Map.of("deployments", configs.stream().map(DeploymentConfig::toMap).toList()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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

    /** Typed reads of one deployment's fields, each error naming the field. */
    private record Reader(ObjectNode fields, String source, String deployment) {

        private InvalidConfig invalid(String field, String problem) {
            return new InvalidConfig(source, deployment, field, problem);
        }

        String text(String field, boolean required) {
            JsonNode value = fields.get(field);
            if (value == null || value.isNull()) {
                throw invalid(field, "is required");
            }
            // an unquoted whole number is taken as its text (version: 2); a fractional one is not, since YAML reads
            // 1.10 as 1.1 and the text would not be what was written
            if (!value.isTextual() && !(value.isIntegralNumber() && !required)) {
                throw invalid(field, "must be a string, not " + value
                        + (value.isNumber() ? " (write it in quotes)" : ""));
            }
            String text = value.asText();
            if (text.isBlank()) {
                throw invalid(field, "must not be blank");
            }
            return text;
        }

        int integer(String field, int min, int max) {
            JsonNode value = fields.get(field);
            if (value == null || !value.isIntegralNumber() || !value.canConvertToInt()) {
                throw invalid(field, "must be a whole number, not " + value);
            }
            int number = value.intValue();
            if (number < min || number > max) {
                throw invalid(field, "must be between " + min + " and " + max + ", not " + number);
            }
            return number;
        }

        boolean bool(String field) {
            JsonNode value = fields.get(field);
            if (value == null || !value.isBoolean()) {
                throw invalid(field, "must be true or false, not " + value);
            }
            return value.booleanValue();
        }

        double fraction(String field) {
            JsonNode value = fields.get(field);
            if (value == null || !value.isNumber()) {
                throw invalid(field, "must be a number in (0, 1], not " + value);
            }
            double number = value.doubleValue();
            if (!(number > 0 && number <= 1)) {
                throw invalid(field, "must be in (0, 1], not " + number);
            }
            return number;
        }

        String choice(String field, String... allowed) {
            JsonNode value = fields.get(field);
            if (value != null && value.isTextual()) {
                for (String option : allowed) {
                    if (option.equals(value.textValue())) {
                        return option;
                    }
                }
            }
            throw invalid(field, "must be one of " + String.join(", ", allowed) + ", not " + value);
        }

        Duration duration(String field, Duration min, Duration max) {
            JsonNode value = fields.get(field);
            if (value == null || !value.isTextual()) {
                throw invalid(field, "must be a duration such as 2ms, 30s or 1m, not " + value);
            }
            Duration duration;
            try {
                duration = DurationConverter.parseDuration(value.textValue().trim());
            } catch (RuntimeException e) {
                throw invalid(field, "'" + value.textValue() + "' is not a duration such as 2ms, 30s or 1m");
            }
            if (duration == null || duration.compareTo(min) < 0 || duration.compareTo(max) > 0) {
                throw invalid(field, "must be between " + DeploymentConfig.text(min) + " and "
                        + DeploymentConfig.text(max) + ", not " + value.textValue());
            }
            return duration;
        }
    }
}
