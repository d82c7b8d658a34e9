package dev.serval.api.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.serval.api.config.DeploymentFields.Kind;
import dev.serval.api.config.DeploymentFields.Refused;
import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DurationRange;
import dev.serval.spec.IntRange;
import dev.serval.spec.InvalidSpec;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The sub-fields of a deployment's {@code autoscaling} mapping, each written once like {@link DeploymentFields}'
 * flat keys: its snake_case key, how its value is read and written, and the {@link AutoscalingSpec} component it
 * stands for. Errors name the field as {@code autoscaling.<key>}. A sub-field not given keeps the value of the
 * settings it is read over (a PATCH's current ones), or takes {@link AutoscalingSpec#DEFAULTS}'.
 */
final class AutoscalingFields {

    static final String KEY = "autoscaling";
    /** Replica counts one config may ask for, as for {@code num_replicas}. */
    private static final int MAX_REPLICAS = 64;

    static final Sub<Integer> MIN_REPLICAS = sub(tighter(AutoscalingSpec.MIN_REPLICAS), AutoscalingSpec::minReplicas,
            false);
    static final Sub<Integer> MAX_REPLICAS_FIELD = sub(tighter(AutoscalingSpec.MAX_REPLICAS),
            AutoscalingSpec::maxReplicas, false);
    static final Sub<Integer> INITIAL_REPLICAS = sub(tighter(AutoscalingSpec.INITIAL_REPLICAS),
            AutoscalingSpec::initialReplicas, true);
    static final Sub<Double> TARGET_ONGOING_REQUESTS = new Sub<>("target_ongoing_requests",
            positive(AutoscalingSpec.MAX_TARGET_ONGOING_REQUESTS), AutoscalingSpec::targetOngoingRequests, false);
    static final Sub<Duration> UPSCALE_DELAY = sub(AutoscalingSpec.UPSCALE_DELAY, AutoscalingSpec::upscaleDelay,
            false);
    static final Sub<Duration> DOWNSCALE_DELAY = sub(AutoscalingSpec.DOWNSCALE_DELAY, AutoscalingSpec::downscaleDelay,
            false);
    static final Sub<Duration> DOWNSCALE_TO_ZERO_DELAY = sub(AutoscalingSpec.DOWNSCALE_TO_ZERO_DELAY,
            AutoscalingSpec::downscaleToZeroDelay, true);
    static final Sub<Duration> LOOK_BACK_PERIOD = sub(AutoscalingSpec.LOOK_BACK_PERIOD,
            AutoscalingSpec::lookBackPeriod, false);
    static final Sub<Double> UPSCALING_FACTOR = new Sub<>("upscaling_factor",
            positive(AutoscalingSpec.MAX_UPSCALING_FACTOR), AutoscalingSpec::upscalingFactor, false);
    static final Sub<Double> DOWNSCALING_FACTOR = new Sub<>("downscaling_factor", positive(1),
            AutoscalingSpec::downscalingFactor, false);

    /** Every sub-field, in the order the API shows them. */
    static final List<Sub<?>> ALL = List.of(MIN_REPLICAS, MAX_REPLICAS_FIELD, INITIAL_REPLICAS, TARGET_ONGOING_REQUESTS,
            UPSCALE_DELAY, DOWNSCALE_DELAY, DOWNSCALE_TO_ZERO_DELAY, LOOK_BACK_PERIOD, UPSCALING_FACTOR,
            DOWNSCALING_FACTOR);

    private AutoscalingFields() {
    }

    /**
     * The settings {@code node} (a mapping) gives, over {@code base} (null: the defaults).
     *
     * @throws InvalidConfig naming {@code autoscaling.<key>} for an unknown key or a bad value
     */
    static AutoscalingSpec read(JsonNode node, AutoscalingSpec base, String source, String deployment) {
        if (!node.isObject()) {
            throw new InvalidConfig(source, deployment, KEY, "must be a mapping of autoscaling settings (or null to "
                    + "turn autoscaling off), not " + node);
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (named(name) == null) {
                Sub<?> snake = named(name.replace('-', '_'));
                throw new InvalidConfig(source, deployment, KEY + "." + name, "unknown field" + (snake != null
                        ? " (did you mean '" + snake.key() + "'?)" : "; known fields: " + keys()));
            }
        }
        AutoscalingSpec over = base != null ? base : AutoscalingSpec.DEFAULTS;
        Map<Sub<?>, Object> values = new LinkedHashMap<>();
        for (Sub<?> sub : ALL) {
            values.put(sub, sub.read(node.get(sub.key()), over, source, deployment));
        }
        try {
            return new AutoscalingSpec((Integer) values.get(MIN_REPLICAS), (Integer) values.get(MAX_REPLICAS_FIELD),
                    (Integer) values.get(INITIAL_REPLICAS), (Double) values.get(TARGET_ONGOING_REQUESTS),
                    (Duration) values.get(UPSCALE_DELAY), (Duration) values.get(DOWNSCALE_DELAY),
                    (Duration) values.get(DOWNSCALE_TO_ZERO_DELAY), (Duration) values.get(LOOK_BACK_PERIOD),
                    (Double) values.get(UPSCALING_FACTOR), (Double) values.get(DOWNSCALING_FACTOR));
        } catch (InvalidSpec e) {
            throw new InvalidConfig(source, deployment, KEY + "." + e.field(), e.problem());
        }
    }

    /** The settings as the config file writes them (optional ones only when set). */
    static Map<String, Object> toMap(AutoscalingSpec spec) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (Sub<?> sub : ALL) {
            Object value = sub.write(spec);
            if (value != null) {
                map.put(sub.key(), value);
            }
        }
        return map;
    }

    /**
     * The property {@code autoscaling.<kebab-key>}'s text as it would be written in the file, set into
     * {@code settings}.
     *
     * @throws InvalidConfig for an unknown key
     */
    static void fromProperty(String kebabKey, String text, ObjectNode settings, String source, String deployment) {
        Sub<?> sub = named(kebabKey.replace('-', '_'));
        if (sub == null) {
            throw new InvalidConfig(source, deployment, KEY + "." + kebabKey, "unknown property; known properties: "
                    + ALL.stream().map(s -> KEY + "." + s.key().replace('_', '-')).toList());
        }
        settings.set(sub.key(), sub.kind().fromText(text));
    }

    /** The sub-fields' defaults as the config file writes them (docs/configuration.md's table). */
    static Map<String, Object> defaults() {
        return toMap(AutoscalingSpec.DEFAULTS);
    }

    private static Sub<?> named(String key) {
        for (Sub<?> sub : ALL) {
            if (sub.key().equals(key)) {
                return sub;
            }
        }
        return null;
    }

    private static List<String> keys() {
        return ALL.stream().map(Sub::key).toList();
    }

    private static IntRange tighter(IntRange engine) {
        return new IntRange(engine.field(), engine.min(), Math.min(engine.max(), MAX_REPLICAS));
    }

    private static Sub<Integer> sub(IntRange range, Function<AutoscalingSpec, Integer> component, boolean optional) {
        return new Sub<>(range.field(), Kind.whole(range), component, optional);
    }

    private static Sub<Duration> sub(DurationRange range, Function<AutoscalingSpec, Duration> component,
            boolean optional) {
        return new Sub<>(range.field(), Kind.duration(range), component, optional);
    }

    /** A number above 0 and at most {@code max}, whole or not. */
    private static Kind<Double> positive(double max) {
        String bounds = "must be a number above 0 and at most " + (max == Math.rint(max) ? Long.toString((long) max)
                : Double.toString(max));
        return new Kind<>() {
            @Override
            public Double read(JsonNode node) {
                if (node == null || !node.isNumber()) {
                    throw new Refused(bounds + ", not " + node);
                }
                double value = node.doubleValue();
                if (!(value > 0 && value <= max)) {
                    throw new Refused(bounds + ", not " + node);
                }
                return value;
            }

            @Override
            public JsonNode fromText(String text) {
                return Kind.number(text);
            }
        };
    }

    /**
     * One sub-field.
     *
     * @param optional whether it may be left unset (null: {@code initial_replicas}, {@code downscale_to_zero_delay})
     */
    record Sub<T>(String key, Kind<T> kind, Function<AutoscalingSpec, T> component, boolean optional) {

        /** The value {@code node} gives (null for an optional one given as null), or {@code base}'s. */
        T read(JsonNode node, AutoscalingSpec base, String source, String deployment) {
            if (node == null) {
                return component.apply(base);
            }
            if (node.isNull() && optional) {
                return null;
            }
            try {
                return kind.read(node);
            } catch (Refused e) {
                throw new InvalidConfig(source, deployment, KEY + "." + key, e.getMessage());
            }
        }

        /** The value in {@code spec} as the config file writes it, or null when unset. */
        Object write(AutoscalingSpec spec) {
            T value = component.apply(spec);
            return value == null ? null : kind.write(value);
        }
    }
}
