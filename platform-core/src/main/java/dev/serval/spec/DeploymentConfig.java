package dev.serval.spec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.serval.error.Spelling;
import dev.serval.spec.DeploymentFields.Field;
import dev.serval.spec.DeploymentFields.Section;
import dev.serval.spec.DeploymentFields.Values;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One deployment's config as the config file, the state file and the management API write it (a YAML or JSON
 * mapping: {@code {model: ..., num_replicas: 2, autoscaling: {max_replicas: 4}}}) or as properties give it (kebab-case
 * keys, dotted within a nested section: {@code autoscaling.max-replicas}), read into a {@link DeploymentSpec} through
 * the one table of fields, with every field checked. A refusal is an {@link InvalidSpec} whose field is the key as
 * written (dotted within a section; null when the problem is not one key's), for the edge to name with its source and
 * deployment. A field not given takes {@code base}'s value (a PATCH) or the spec's default.
 */
public final class DeploymentConfig {

    private static final String NAME = "name";
    /** The keys a deployment's mapping may hold. */
    private static final Set<String> KEYS = keys();

    private DeploymentConfig() {
    }

    /**
     * The spec {@code node} (a mapping) gives over {@code base} (null: the defaults), checked field by field, then
     * record by record.
     *
     * @param name the deployment's name; a {@code name} field in {@code node}, if any, must equal it
     * @throws InvalidSpec naming the refused key
     */
    public static DeploymentSpec read(String name, JsonNode node, DeploymentSpec base) {
        if (!node.isObject()) {
            throw new InvalidSpec(null, "a deployment is a mapping of fields");
        }
        rejectUnknown(node);
        JsonNode nameField = node.get(NAME);
        if (nameField != null && !(nameField.isTextual() && nameField.textValue().equals(name))) {
            throw new InvalidSpec(NAME, "is " + nameField + " but the deployment is '" + name + "'");
        }
        Values values = new Values();
        readSection(Section.DEPLOYMENT, node, base, values);
        String model = values.get(DeploymentFields.MODEL);
        boolean multiplexed = MultiplexSpec.isGlob(model);
        for (Field<?> field : DeploymentFields.in(Section.MULTIPLEX)) {
            if (!multiplexed && node.has(field.key())) {
                throw new InvalidSpec(field.key(), "applies to a multiplexed deployment, whose model is a glob over the"
                        + " repository's model names such as 't-*'; '" + model + "' names one model");
            }
        }
        readSection(Section.MULTIPLEX, node, base, values);
        if (multiplexed && node.has(DeploymentFields.VERSION.key())) {
            throw new InvalidSpec(DeploymentFields.VERSION.key(), "a multiplexed deployment serves each model's "
                    + "newest version (a new version folder rolls that model); remove 'version'");
        }
        AutoscalingSpec autoscaling = autoscaling(node, base);
        DeploymentSpec spec = DeploymentFields.spec(name, values).withAutoscaling(autoscaling)
                .withCache(cache(node.get(Section.CACHE.key), base));
        if (spec.health().minReadyReplicas() > spec.maxReplicas()) {
            throw new InvalidSpec(DeploymentFields.MIN_READY_REPLICAS.key(), "is " + spec.health().minReadyReplicas()
                    + " but " + (spec.isAutoscaled() ? "autoscaling.max_replicas" : "num_replicas") + " is "
                    + spec.maxReplicas() + "; the deployment could never be ready");
        }
        return spec;
    }

    /**
     * The spec of one deployment's properties, by kebab-case key. Each property's text is read as the config file's
     * field of the same name in snake_case ({@code num-replicas} is {@code num_replicas}), by the same rules; a key
     * of a nested section is dotted ({@code autoscaling.min-replicas}); an absent property is the spec's default, an
     * unknown one an error. The {@code autoscaling.*} properties give the autoscaling block, which then replaces
     * {@code num-replicas} instead of conflicting with it (application.properties lists it for every deployment, so
     * that an environment variable can override it).
     *
     * @throws InvalidSpec naming the refused key
     */
    public static DeploymentSpec fromProperties(String name, Map<String, String> properties) {
        ObjectNode fields = JsonNodeFactory.instance.objectNode();
        String[] scalar = new String[1];
        properties.forEach((key, text) -> {
            Field<?> field = DeploymentFields.named(key.replace('-', '_'));
            for (Section nested : List.of(Section.AUTOSCALING, Section.CACHE)) {
                if (key.startsWith(nested.key + ".")) {
                    if (field == null) {
                        throw new InvalidSpec(key, Spelling.unknown("property", "properties", key, DeploymentFields
                                .in(nested).stream().map(f -> f.path().replace('_', '-')).toList()));
                    }
                    JsonNode settings = fields.get(nested.key);
                    ObjectNode section = settings instanceof ObjectNode object ? object : fields.putObject(nested.key);
                    section.set(field.key(), field.kind().fromText(text));
                    return;
                }
            }
            if (key.equals(Section.CACHE.key)) { // cache=off (or on): merged with any cache.* below
                scalar[0] = text.trim();
                return;
            }
            if (field == null) {
                throw new InvalidSpec(key, Spelling.unknown("property", "properties", key, KEYS.stream()
                        .filter(k -> !k.equals(NAME))
                        .map(k -> k.equals(Section.AUTOSCALING.key) || k.equals(Section.CACHE.key) ? k + ".*"
                                : k.replace('_', '-')).sorted()
                        .toList()));
            }
            fields.set(field.key(), field.kind().fromText(text));
        });
        if (fields.has(Section.AUTOSCALING.key)) {
            fields.remove(DeploymentFields.NUM_REPLICAS.key());
        }
        if (scalar[0] != null) {
            if (fields.get(Section.CACHE.key) instanceof ObjectNode cache) {
                cache.set(DeploymentFields.CACHE_ENABLED.key(), DeploymentFields.CACHE_ENABLED.kind().fromText(
                        scalar[0].equalsIgnoreCase("on") ? "true" : scalar[0].equalsIgnoreCase("off") ? "false"
                                : scalar[0]));
            } else {
                fields.put(Section.CACHE.key, scalar[0]);
            }
        }
        return read(name, fields, null);
    }

    /** The spec under its config-file keys, durations as text: what the API shows and the state file stores. */
    public static Map<String, Object> toMap(DeploymentSpec spec) {
        return DeploymentFields.toMap(spec);
    }

    /**
     * The autoscaling settings of {@code node} over {@code base}'s: an {@code autoscaling} mapping turns it on (its
     * fields over the current settings, or the defaults), {@code autoscaling: null} or {@code num_replicas} alone
     * turn it off ({@link AutoscalingSpec#OFF}), neither keeps {@code base}'s; both together are refused, naming both.
     */
    private static AutoscalingSpec autoscaling(JsonNode node, DeploymentSpec base) {
        String key = Section.AUTOSCALING.key;
        JsonNode settings = node.get(key);
        boolean numReplicas = node.has(DeploymentFields.NUM_REPLICAS.key());
        if (settings != null && !settings.isNull() && numReplicas) {
            throw new InvalidSpec(key, "autoscaling and num_replicas are both given; autoscaling replaces "
                    + "num_replicas (it sets the count between min_replicas and max_replicas): give one");
        }
        if (settings == null) {
            return numReplicas || base == null ? AutoscalingSpec.OFF : base.autoscaling();
        }
        if (settings.isNull()) {
            return AutoscalingSpec.OFF;
        }
        if (!settings.isObject()) {
            throw new InvalidSpec(key, "must be a mapping of autoscaling settings (or null to turn autoscaling off), "
                    + "not " + settings);
        }
        List<String> known = DeploymentFields.in(Section.AUTOSCALING).stream().map(Field::key).toList();
        for (Iterator<String> names = settings.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw new InvalidSpec(key + "." + name, Spelling.unknown("field", "fields", name, known));
            }
        }
        Values values = new Values();
        readSection(Section.AUTOSCALING, settings, base, values);
        try {
            return DeploymentFields.autoscaling(values);
        } catch (InvalidSpec e) {
            throw new InvalidSpec(key + "." + e.field(), e.problem());
        }
    }

    /**
     * The result cache settings of {@code settings} (the {@code cache} key) over {@code base}'s: absent, {@code base}'s
     * (or the defaults); {@code off} or {@code false}, those turned off; {@code on} or {@code true}, those turned on; a
     * mapping, its fields over them.
     */
    private static CacheSpec cache(JsonNode settings, DeploymentSpec base) {
        String key = Section.CACHE.key;
        CacheSpec current = base != null ? base.cache() : CacheSpec.DEFAULTS;
        if (settings == null || settings.isNull()) {
            return current;
        }
        String word = settings.isBoolean() ? String.valueOf(settings.booleanValue())
                : settings.isTextual() ? settings.textValue().trim().toLowerCase(Locale.ROOT) : null;
        if ("off".equals(word) || "false".equals(word)) {
            return current.off();
        }
        if ("on".equals(word) || "true".equals(word)) {
            return new CacheSpec(true, current.maxBytes());
        }
        if (!settings.isObject()) {
            throw new InvalidSpec(key, "must be off, on, or a mapping of cache settings such as {max_bytes: 64Mi}, "
                    + "not " + settings);
        }
        List<String> known = DeploymentFields.in(Section.CACHE).stream().map(Field::key).toList();
        for (Iterator<String> names = settings.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                String snake = name.replace('-', '_');
                throw new InvalidSpec(key + "." + name, "unknown field" + (known.contains(snake)
                        ? " (did you mean '" + snake + "'?)" : "; known fields: " + known));
            }
        }
        Values values = new Values();
        readSection(Section.CACHE, settings, base, values);
        return DeploymentFields.cache(values); // CacheSpec names cache.max_bytes itself
    }

    /** The values of {@code section}'s fields that {@code node} gives, over {@code base}'s. */
    private static void readSection(Section section, JsonNode node, DeploymentSpec base, Values values) {
        for (Field<?> field : DeploymentFields.in(section)) {
            read(field, node.get(field.key()), base, values);
        }
    }

    private static <T> void read(Field<T> field, JsonNode node, DeploymentSpec base, Values values) {
        values.put(field, field.read(node, base));
    }

    private static void rejectUnknown(JsonNode node) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!KEYS.contains(field)) {
                throw new InvalidSpec(field, Spelling.unknown("field", "fields", field, KEYS));
            }
        }
    }

    private static Set<String> keys() {
        SortedSet<String> keys = new TreeSet<>();
        keys.add(NAME);
        keys.add(Section.AUTOSCALING.key);
        keys.add(Section.CACHE.key);
        for (Field<?> field : DeploymentFields.ALL) {
            if (field.section() != Section.AUTOSCALING && field.section() != Section.CACHE) {
                keys.add(field.key());
            }
        }
        return Collections.unmodifiableSortedSet(keys);
    }
}
