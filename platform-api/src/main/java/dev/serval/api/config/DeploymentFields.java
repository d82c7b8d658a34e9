package dev.serval.api.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.serval.model.ChunkReduction;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DurationRange;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.IntRange;
import dev.serval.spec.LongInputPolicy;
import dev.serval.spec.ModelReference;
import dev.serval.spec.MultiplexSpec;
import dev.serval.spec.PredictorSpec;
import dev.serval.spec.RolloutSpec;
import io.quarkus.runtime.configuration.DurationConverter;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The flat keys of a deployment's config, each written once: its snake_case key, how its value is read and written,
 * and the spec component it stands for. Bounds and defaults are the spec records' ({@code DEFAULTS}, {@link IntRange},
 * {@link DurationRange}); only the replica and admission-count bounds are the edge's own, tighter than the
 * engine's. The config file, the management API, the state file and the {@code serval.deployments.*} properties are
 * all read through this table ({@link ConfigParser}), {@link #toMap} writes it, and DeploymentDefaultsTest holds
 * docs/configuration.md to it.
 */
final class DeploymentFields {

    /*
     * Bounds a config sets tighter than the engine's, so that no single config asks a server for more than it can run
     * (the bound across deployments is serval.limits.max-predictor-threads): replicas (the engine takes 1024) and
     * admission counts (the engine takes 1,000,000). Every other bound is the spec records'.
     */
    private static final int MAX_REPLICAS = 64;
    private static final int MAX_COUNT = 100_000;

    /** The deployment whose components give every default; its name and model are placeholders, never read. */
    private static final DeploymentSpec DEFAULTS = DeploymentSpec.defaults("defaults", "model");

    static final Field<String> MODEL = new Field<>("model", Kind.text(false), s -> s.model().name(), false);
    static final Field<String> VERSION = field("version", Kind.text(true), DeploymentSpec::version);
    static final Field<Integer> MAX_LENGTH = field(ModelReference.MAX_LENGTH, s -> s.model().maxLength());
    static final Field<LongInputPolicy> LONG_INPUTS = field("long_inputs", Kind.choice(LongInputPolicy.values()),
            s -> s.model().longInputs());
    static final Field<Integer> CHUNK_OVERLAP = field(ModelReference.CHUNK_OVERLAP, s -> s.model().chunkOverlap());
    static final Field<ChunkReduction> CHUNK_REDUCTION = field("chunk_reduction",
            Kind.choice(ChunkReduction.values()), s -> s.model().chunkReduction());
    static final Field<Integer> MAX_CHUNKS_PER_INPUT = field(ModelReference.MAX_CHUNKS_PER_INPUT,
            s -> s.model().maxChunksPerInput());
    static final Field<Integer> NUM_REPLICAS = field(tighter(DeploymentSpec.NUM_REPLICAS, MAX_REPLICAS),
            DeploymentSpec::numReplicas);
    static final Field<Integer> MIN_READY_REPLICAS = field(tighter(HealthSpec.MIN_READY_REPLICAS, MAX_REPLICAS),
            s -> s.health().minReadyReplicas());
    static final Field<Integer> MAX_ONGOING_REQUESTS = field(tighter(AdmissionSpec.MAX_ONGOING_REQUESTS, MAX_COUNT),
            s -> s.admission().maxOngoingRequests());
    static final Field<Integer> MAX_QUEUED_REQUESTS = field(tighter(AdmissionSpec.MAX_QUEUED_REQUESTS, MAX_COUNT),
            s -> s.admission().maxQueuedRequests());
    static final Field<Integer> PREDICTOR_THREADS = field(PredictorSpec.PREDICTOR_THREADS,
            s -> s.predictors().predictorThreads());
    static final Field<Integer> INTRA_OP_THREADS = field(PredictorSpec.INTRA_OP_THREADS,
            s -> s.predictors().intraOpThreads());
    static final Field<Boolean> LEND_IDLE_CORES = field("lend_idle_cores", Kind.BOOLEAN,
            s -> s.predictors().lendIdleCores());
    static final Field<Duration> IDLE_SPIN = field(PredictorSpec.IDLE_SPIN, s -> s.predictors().idleSpin());
    static final Field<Integer> MAX_INPUTS_PER_REQUEST = field(tighter(AdmissionSpec.MAX_INPUTS_PER_REQUEST, MAX_COUNT),
            s -> s.admission().maxInputsPerRequest());
    static final Field<Duration> HEALTH_CHECK_PERIOD = field(HealthSpec.HEALTH_CHECK_PERIOD,
            s -> s.health().healthCheckPeriod());
    static final Field<Integer> HEALTH_CHECK_FAILURE_THRESHOLD = field(HealthSpec.HEALTH_CHECK_FAILURE_THRESHOLD,
            s -> s.health().healthCheckFailureThreshold());
    static final Field<Duration> GRACEFUL_SHUTDOWN_TIMEOUT = field(RolloutSpec.GRACEFUL_SHUTDOWN_TIMEOUT,
            s -> s.rollout().gracefulShutdownTimeout());
    static final Field<Duration> REQUEST_TIMEOUT = field(AdmissionSpec.REQUEST_TIMEOUT,
            s -> s.admission().requestTimeout());
    static final Field<Boolean> BATCH_INVARIANCE = field("batch_invariance", Kind.BOOLEAN,
            s -> s.batching().batchInvariance());
    static final Field<Integer> MAX_BATCH_SIZE = field(BatchingSpec.MAX_BATCH_SIZE, s -> s.batching().maxBatchSize());
    static final Field<Duration> BATCH_WAIT_TIMEOUT = field(BatchingSpec.BATCH_WAIT_TIMEOUT,
            s -> s.batching().batchWaitTimeout());
    static final Field<Double> ROLLING_UPDATE_FRACTION = field(RolloutSpec.ROLLING_UPDATE_FRACTION, Kind.FRACTION,
            s -> s.rollout().rollingUpdateFraction());

    /** Every field, in the order the API shows them and the state file writes them. */
    static final List<Field<?>> ALL = List.of(MODEL, VERSION, MAX_LENGTH, LONG_INPUTS, CHUNK_OVERLAP, CHUNK_REDUCTION,
            MAX_CHUNKS_PER_INPUT, NUM_REPLICAS, MIN_READY_REPLICAS, MAX_ONGOING_REQUESTS, MAX_QUEUED_REQUESTS,
            PREDICTOR_THREADS, INTRA_OP_THREADS, LEND_IDLE_CORES, IDLE_SPIN, MAX_INPUTS_PER_REQUEST, HEALTH_CHECK_PERIOD,
            HEALTH_CHECK_FAILURE_THRESHOLD, GRACEFUL_SHUTDOWN_TIMEOUT, REQUEST_TIMEOUT, BATCH_INVARIANCE,
            MAX_BATCH_SIZE, BATCH_WAIT_TIMEOUT, ROLLING_UPDATE_FRACTION);

    /**
     * The fields of a multiplexed deployment only (its {@code model} is a glob): given for another, they are refused;
     * written only for one.
     */
    static final Field<Integer> MAX_MODELS_PER_REPLICA = field(MultiplexSpec.MAX_MODELS_PER_REPLICA,
            s -> multiplex(s).maxModelsPerReplica());
    static final Field<Long> MAX_MODEL_MEMORY = field("max_model_memory", Kind.SIZE,
            s -> multiplex(s).maxModelMemory());
    static final List<Field<?>> MULTIPLEX = List.of(MAX_MODELS_PER_REPLICA, MAX_MODEL_MEMORY);

    private static MultiplexSpec multiplex(DeploymentSpec spec) {
        return spec.multiplex() != null ? spec.multiplex() : MultiplexSpec.DEFAULTS;
    }

    private static final Map<String, Field<?>> BY_KEY = byKey();
    /** Microseconds, which Quarkus's duration syntax lacks: at most 9 digits, so the nanoseconds fit a long. */
    private static final Pattern MICROSECONDS = Pattern.compile("[0-9]{1,9}us");

    private DeploymentFields() {
    }

    /** The field of {@code key} (snake_case), or null. */
    static Field<?> named(String key) {
        return BY_KEY.get(key);
    }

    /** The spec {@code values} describe; one constructor per record, so each record checks its fields together. */
    static DeploymentSpec spec(String name, Values values) {
        return new DeploymentSpec(name,
                new ModelReference(values.get(MODEL), values.get(MAX_LENGTH), values.get(LONG_INPUTS),
                        values.get(CHUNK_OVERLAP), values.get(CHUNK_REDUCTION), values.get(MAX_CHUNKS_PER_INPUT)),
                values.get(VERSION),
                values.get(NUM_REPLICAS),
                new AdmissionSpec(values.get(MAX_ONGOING_REQUESTS), values.get(MAX_QUEUED_REQUESTS),
                        values.get(MAX_INPUTS_PER_REQUEST), values.get(REQUEST_TIMEOUT)),
                new BatchingSpec(values.get(BATCH_INVARIANCE), values.get(MAX_BATCH_SIZE),
                        values.get(BATCH_WAIT_TIMEOUT)),
                new PredictorSpec(values.get(PREDICTOR_THREADS), values.get(INTRA_OP_THREADS),
                        values.get(LEND_IDLE_CORES), values.get(IDLE_SPIN)),
                new HealthSpec(values.get(HEALTH_CHECK_PERIOD), values.get(HEALTH_CHECK_FAILURE_THRESHOLD),
                        values.get(MIN_READY_REPLICAS)),
                new RolloutSpec(values.get(ROLLING_UPDATE_FRACTION), values.get(GRACEFUL_SHUTDOWN_TIMEOUT)),
                null,
                MultiplexSpec.isGlob(values.get(MODEL))
                        ? new MultiplexSpec(values.get(MAX_MODELS_PER_REPLICA), values.get(MAX_MODEL_MEMORY)) : null);
    }

    /** The default of every field but the model, as the config file writes it (docs/configuration.md's table). */
    static Map<String, Object> defaults() {
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (Field<?> field : ALL) {
            if (field.hasDefault()) {
                defaults.put(field.key(), field.write(DEFAULTS));
            }
        }
        return defaults;
    }

    /** The spec under its config-file keys, durations as text: what the API shows and the state file stores. */
    static Map<String, Object> toMap(DeploymentSpec spec) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("name", spec.name());
        for (Field<?> field : ALL) {
            if (field == NUM_REPLICAS && spec.isAutoscaled()) {
                map.put(AutoscalingFields.KEY, AutoscalingFields.toMap(spec.autoscaling())); // replaces num_replicas
            } else {
                map.put(field.key(), field.write(spec));
            }
        }
        if (spec.isMultiplexed()) {
            map.remove(VERSION.key()); // each model's newest version
            MULTIPLEX.forEach(field -> map.put(field.key(), field.write(spec)));
        }
        return map;
    }

    /** The engine's range of {@code engine}'s field, capped at what one config may ask for. */
    private static IntRange tighter(IntRange engine, int max) {
        return new IntRange(engine.field(), engine.min(), Math.min(engine.max(), max));
    }

    private static Field<Integer> field(IntRange range, Function<DeploymentSpec, Integer> component) {
        return field(range.field(), Kind.whole(range), component);
    }

    private static Field<Duration> field(DurationRange range, Function<DeploymentSpec, Duration> component) {
        return field(range.field(), Kind.duration(range), component);
    }

    private static <T> Field<T> field(String key, Kind<T> kind, Function<DeploymentSpec, T> component) {
        return new Field<>(key, kind, component, true);
    }

    private static Map<String, Field<?>> byKey() {
        Map<String, Field<?>> byKey = new LinkedHashMap<>();
        ALL.forEach(field -> byKey.put(field.key(), field));
        MULTIPLEX.forEach(field -> byKey.put(field.key(), field));
        return byKey;
    }

    /**
     * One flat key.
     *
     * @param key        the snake_case key of the config file and the management API
     * @param kind       how its value is read, checked and written
     * @param component  the spec component it stands for
     * @param hasDefault false for the model, which every deployment must name
     */
    record Field<T>(String key, Kind<T> kind, Function<DeploymentSpec, T> component, boolean hasDefault) {

        /** The field's value in {@code spec}, as the config file writes it. */
        Object write(DeploymentSpec spec) {
            return kind.write(component.apply(spec));
        }

        /**
         * The field's default value.
         *
         * @throws Refused when the field has none: it is required
         */
        T fallback() {
            if (!hasDefault) {
                throw new Refused("is required");
            }
            return component.apply(DEFAULTS);
        }
    }

    /** The typed values of one deployment's fields, filled by {@link ConfigParser}. */
    static final class Values {

        private final Map<Field<?>, Object> values = new LinkedHashMap<>();

        <T> void put(Field<T> field, T value) {
            values.put(field, value);
        }

        @SuppressWarnings("unchecked")
        <T> T get(Field<T> field) {
            return (T) values.get(field);
        }
    }

    /** How a field's value is read from YAML or JSON (or a property's text), checked and written back. */
    interface Kind<T> {

        /**
         * The value of {@code node}.
         *
         * @throws Refused saying what is wrong with it (the caller names the source, deployment and field)
         */
        T read(JsonNode node);

        /** The value as the config file writes it. */
        default Object write(T value) {
            return value;
        }

        /** A property's text as the YAML value it stands for, so that the file's rules read it. */
        default JsonNode fromText(String text) {
            return TextNode.valueOf(text);
        }

        Kind<Boolean> BOOLEAN = new Kind<>() {
            @Override
            public Boolean read(JsonNode node) {
                if (node == null || !node.isBoolean()) {
                    throw new Refused("must be true or false, not " + node);
                }
                return node.booleanValue();
            }

            @Override
            public JsonNode fromText(String text) {
                // a property's text in any case, as SmallRye reads booleans (TRUE from an environment variable)
                String trimmed = text.trim();
                return trimmed.equalsIgnoreCase("true") || trimmed.equalsIgnoreCase("false")
                        ? BooleanNode.valueOf(Boolean.parseBoolean(trimmed)) : TextNode.valueOf(text);
            }
        };

        /** A property's text as the number it stands for, or as text (for the reader to refuse) when it is none. */
        static JsonNode number(String text) {
            try {
                return DoubleNode.valueOf(Double.parseDouble(text.trim()));
            } catch (NumberFormatException e) {
                return TextNode.valueOf(text);
            }
        }

        /**
         * A size in bytes: a whole number, or text with a unit, {@code 512Mi} or {@code 2G} (as Kubernetes writes
         * quantities: {@code k M G T} powers of 1000, {@code Ki Mi Gi Ti} powers of 1024, an optional trailing
         * {@code B}). Written back as a whole number of bytes.
         */
        Kind<Long> SIZE = new Kind<>() {
            private static final java.util.regex.Pattern QUANTITY =
                    java.util.regex.Pattern.compile("(\\d{1,15})\\s*([kKMGT]i?)?B?");

            @Override
            public Long read(JsonNode node) {
                if (node != null && node.isIntegralNumber() && node.canConvertToLong() && node.longValue() >= 0) {
                    return node.longValue();
                }
                java.util.regex.Matcher matcher = node != null && node.isTextual()
                        ? QUANTITY.matcher(node.textValue().trim()) : null;
                if (matcher == null || !matcher.matches()) {
                    throw new Refused("must be a size in bytes, such as 536870912, 512Mi or 2G, not " + node);
                }
                long number = Long.parseLong(matcher.group(1));
                String unit = matcher.group(2) == null ? "" : matcher.group(2).toUpperCase(Locale.ROOT);
                long factor = switch (unit) {
                    case "" -> 1L;
                    case "K" -> 1_000L;
                    case "KI" -> 1L << 10;
                    case "M" -> 1_000_000L;
                    case "MI" -> 1L << 20;
                    case "G" -> 1_000_000_000L;
                    case "GI" -> 1L << 30;
                    case "T" -> 1_000_000_000_000L;
                    default -> 1L << 40; // TI
                };
                if (number > Long.MAX_VALUE / factor) {
                    throw new Refused("is too large: " + node.textValue());
                }
                return number * factor;
            }

            @Override
            public JsonNode fromText(String text) {
                try {
                    return LongNode.valueOf(Long.parseLong(text.trim()));
                } catch (NumberFormatException e) {
                    return TextNode.valueOf(text);
                }
            }
        };

        /** A number in (0, 1]; the range itself is the record's to check. */
        Kind<Double> FRACTION = new Kind<>() {
            @Override
            public Double read(JsonNode node) {
                if (node == null || !node.isNumber()) {
                    throw new Refused("must be a number in (0, 1], not " + node);
                }
                return node.doubleValue();
            }

            @Override
            public JsonNode fromText(String text) {
                return number(text);
            }
        };

        /**
         * A string. A whole number is taken as its text only when {@code numbersAsText} (an unquoted {@code version:
         * 2}); a fractional one never is, since YAML reads 1.10 as 1.1 and the text would not be what was written.
         */
        static Kind<String> text(boolean numbersAsText) {
            return node -> {
                if (node == null || node.isNull()) {
                    throw new Refused("is required");
                }
                if (!node.isTextual() && !(node.isIntegralNumber() && numbersAsText)) {
                    throw new Refused("must be a string, not " + node + (node.isNumber() ? " (write it in quotes)" : ""));
                }
                String text = node.asText();
                if (text.isBlank()) {
                    throw new Refused("must not be blank");
                }
                return text;
            };
        }

        /** A whole number within {@code range}. */
        static Kind<Integer> whole(IntRange range) {
            return new Kind<>() {
                @Override
                public Integer read(JsonNode node) {
                    if (node == null || !node.isIntegralNumber() || !node.canConvertToInt()) {
                        throw new Refused("must be a whole number, not " + node);
                    }
                    int number = node.intValue();
                    if (!range.contains(number)) {
                        throw new Refused("must be between " + range.min() + " and " + range.max() + ", not " + number);
                    }
                    return number;
                }

                @Override
                public JsonNode fromText(String text) {
                    try {
                        long number = Long.parseLong(text.trim());
                        return number == (int) number ? IntNode.valueOf((int) number) : LongNode.valueOf(number);
                    } catch (NumberFormatException e) {
                        return TextNode.valueOf(text);
                    }
                }
            };
        }

        /**
         * A duration such as {@code 400us}, {@code 2ms}, {@code 30s}, {@code 1m} or {@code PT30S}, within
         * {@code range}.
         */
        static Kind<Duration> duration(DurationRange range) {
            return new Kind<>() {
                @Override
                public Duration read(JsonNode node) {
                    if (node == null || !node.isTextual()) {
                        throw new Refused("must be a duration such as 2ms, 30s or 1m, not " + node);
                    }
                    String text = node.textValue().trim();
                    Duration duration;
                    try {
                        duration = MICROSECONDS.matcher(text).matches()
                                ? Duration.ofNanos(Long.parseLong(text, 0, text.length() - 2, 10) * 1000)
                                : DurationConverter.parseDuration(text);
                    } catch (RuntimeException e) {
                        throw new Refused("'" + node.textValue() + "' is not a duration such as 2ms, 30s or 1m");
                    }
                    if (!range.contains(duration)) {
                        throw new Refused(range.bounds() + ", not " + node.textValue());
                    }
                    return duration;
                }

                @Override
                public Object write(Duration value) {
                    return DurationRange.text(value);
                }
            };
        }

        /** One of an enum's constants, written in lower case. */
        static <E extends Enum<E>> Kind<E> choice(E[] constants) {
            List<String> names = Arrays.stream(constants).map(c -> c.name().toLowerCase(Locale.ROOT)).toList();
            return new Kind<>() {
                @Override
                public E read(JsonNode node) {
                    int index = node != null && node.isTextual() ? names.indexOf(node.textValue()) : -1;
                    if (index < 0) {
                        throw new Refused("must be one of " + String.join(", ", names) + ", not " + node);
                    }
                    return constants[index];
                }

                @Override
                public Object write(E value) {
                    return names.get(value.ordinal());
                }

                /** A property's text in any case, as SmallRye reads enums ({@code CHUNK} from an environment variable). */
                @Override
                public JsonNode fromText(String text) {
                    return TextNode.valueOf(text.trim().toLowerCase(Locale.ROOT));
                }
            };
        }
    }

    /** A value a {@link Kind} refuses; the parser turns it into an {@link InvalidConfig} naming the field. */
    static final class Refused extends RuntimeException {

        Refused(String problem) {
            super(problem, null, false, false);
        }
    }
}
