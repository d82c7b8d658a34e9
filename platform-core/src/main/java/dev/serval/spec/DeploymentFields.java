package dev.serval.spec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.serval.model.ChunkReduction;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every key of a deployment's config, each written once: its section and snake_case key, how its value is read and
 * written, and the spec component it stands for. Bounds and defaults are the spec records' ({@code DEFAULTS},
 * {@link IntRange}, {@link DurationRange}); only the replica and admission-count bounds are the config's own, tighter
 * than the engine's. The config file, the management API, the state file and the {@code serval.deployments.*}
 * properties are all read through this table ({@link DeploymentConfig}), {@link #toMap} writes it, and
 * DeploymentFieldsTest holds docs/configuration.md to it.
 */
final class DeploymentFields {

    /*
     * Bounds a config sets tighter than the engine's, so that no single config asks a server for more than it can run
     * (the bound across deployments is serval.limits.max-predictor-threads): replica counts, fixed or autoscaled (the
     * engine takes 1024), and admission counts (the engine takes 1,000,000). Every other bound is the spec records'.
     */
    private static final int MAX_REPLICAS = 64;
    private static final int MAX_COUNT = 100_000;

    /** The deployment whose components give every default; its name and model are placeholders, never read. */
    static final DeploymentSpec DEFAULTS = DeploymentSpec.defaults("defaults", "model");

    /**
     * Where a key sits: at the top of a deployment's mapping, at the top but only for a multiplexed deployment (whose
     * {@code model} is a glob: given for another, refused; written only for one), or in a nested mapping, whose keys
     * are dotted in properties and errors ({@code autoscaling.min_replicas}).
     */
    enum Section {
        DEPLOYMENT(""), MULTIPLEX(""), AUTOSCALING("autoscaling"), CACHE("cache");

        /** The key of the nested mapping, or "" for keys at the top. */
        final String key;

        Section(String key) {
            this.key = key;
        }
    }

    /** Whether a field may be left out: required (the model), taking its default, or left unset (null). */
    enum Presence {
        REQUIRED, DEFAULT, OPTIONAL
    }

    static final Field<String> MODEL = new Field<>(Section.DEPLOYMENT, "model", SettingKind.text(false),
            s -> s.model().name(), Presence.REQUIRED);
    static final Field<String> VERSION = field("version", SettingKind.text(true), DeploymentSpec::version);
    static final Field<Integer> MAX_LENGTH = field(ModelReference.MAX_LENGTH, s -> s.model().maxLength());
    static final Field<LongInputPolicy> LONG_INPUTS = field("long_inputs",
            SettingKind.choice(LongInputPolicy.values()), s -> s.model().longInputs());
    static final Field<Integer> CHUNK_OVERLAP = field(ModelReference.CHUNK_OVERLAP, s -> s.model().chunkOverlap());
    static final Field<ChunkReduction> CHUNK_REDUCTION = field("chunk_reduction",
            SettingKind.choice(ChunkReduction.values()), s -> s.model().chunkReduction());
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
    static final Field<Integer> MAX_PENDING_TOKENS = field(AdmissionSpec.MAX_PENDING_TOKENS,
            s -> s.admission().maxPendingTokens());
    static final Field<Integer> PREDICTOR_THREADS = field(PredictorSpec.PREDICTOR_THREADS,
            s -> s.predictors().predictorThreads());
    static final Field<Integer> INTRA_OP_THREADS = field(PredictorSpec.INTRA_OP_THREADS,
            s -> s.predictors().intraOpThreads());
    static final Field<Boolean> LEND_IDLE_CORES = field("lend_idle_cores", SettingKind.BOOLEAN,
            s -> s.predictors().lendIdleCores());
    static final Field<Duration> IDLE_SPIN = field(PredictorSpec.IDLE_SPIN, s -> s.predictors().idleSpin());
    static final Field<Integer> MAX_INPUTS_PER_REQUEST = field(tighter(AdmissionSpec.MAX_INPUTS_PER_REQUEST, MAX_COUNT),
            s -> s.admission().maxInputsPerRequest());
    static final Field<Integer> MAX_TOKENS_PER_REQUEST = field(AdmissionSpec.MAX_TOKENS_PER_REQUEST,
            s -> s.admission().maxTokensPerRequest());
    static final Field<Duration> HEALTH_CHECK_PERIOD = field(HealthSpec.HEALTH_CHECK_PERIOD,
            s -> s.health().healthCheckPeriod());
    static final Field<Integer> HEALTH_CHECK_FAILURE_THRESHOLD = field(HealthSpec.HEALTH_CHECK_FAILURE_THRESHOLD,
            s -> s.health().healthCheckFailureThreshold());
    static final Field<Duration> GRACEFUL_SHUTDOWN_TIMEOUT = field(RolloutSpec.GRACEFUL_SHUTDOWN_TIMEOUT,
            s -> s.rollout().gracefulShutdownTimeout());
    static final Field<Duration> REQUEST_TIMEOUT = field(AdmissionSpec.REQUEST_TIMEOUT,
            s -> s.admission().requestTimeout());
    static final Field<Boolean> BATCH_INVARIANCE = field("batch_invariance", SettingKind.BOOLEAN,
            s -> s.batching().batchInvariance());
    static final Field<Integer> MAX_BATCH_SIZE = field(BatchingSpec.MAX_BATCH_SIZE, s -> s.batching().maxBatchSize());
    static final Field<Duration> BATCH_WAIT_TIMEOUT = field(BatchingSpec.BATCH_WAIT_TIMEOUT,
            s -> s.batching().batchWaitTimeout());
    static final Field<Integer> MAX_BATCH_TOKENS = field(BatchingSpec.MAX_BATCH_TOKENS,
            s -> s.batching().maxBatchTokens());
    static final Field<Double> ROLLING_UPDATE_FRACTION = field(RolloutSpec.ROLLING_UPDATE_FRACTION,
            SettingKind.FRACTION, s -> s.rollout().rollingUpdateFraction());

    static final Field<Integer> MAX_MODELS_PER_REPLICA = new Field<>(Section.MULTIPLEX,
            MultiplexSpec.MAX_MODELS_PER_REPLICA.field(), SettingKind.whole(MultiplexSpec.MAX_MODELS_PER_REPLICA),
            s -> s.multiplex().maxModelsPerReplica(), Presence.DEFAULT);
    static final Field<Long> MAX_MODEL_MEMORY = new Field<>(Section.MULTIPLEX, "max_model_memory", SettingKind.SIZE,
            s -> s.multiplex().maxModelMemory(), Presence.DEFAULT);

    static final Field<Integer> MIN_REPLICAS = autoscaling(AutoscalingSpec.MIN_REPLICAS, AutoscalingSpec::minReplicas,
            Presence.DEFAULT);
    static final Field<Integer> MAX_REPLICAS_FIELD = autoscaling(AutoscalingSpec.MAX_REPLICAS,
            AutoscalingSpec::maxReplicas, Presence.DEFAULT);
    static final Field<Integer> INITIAL_REPLICAS = autoscaling(AutoscalingSpec.INITIAL_REPLICAS,
            AutoscalingSpec::initialReplicas, Presence.OPTIONAL);
    static final Field<Double> TARGET_ONGOING_REQUESTS = autoscaling("target_ongoing_requests",
            SettingKind.positive(AutoscalingSpec.MAX_TARGET_ONGOING_REQUESTS), AutoscalingSpec::targetOngoingRequests,
            Presence.DEFAULT);
    static final Field<Duration> UPSCALE_DELAY = autoscaling(AutoscalingSpec.UPSCALE_DELAY,
            AutoscalingSpec::upscaleDelay, Presence.DEFAULT);
    static final Field<Duration> DOWNSCALE_DELAY = autoscaling(AutoscalingSpec.DOWNSCALE_DELAY,
            AutoscalingSpec::downscaleDelay, Presence.DEFAULT);
    static final Field<Duration> DOWNSCALE_TO_ZERO_DELAY = autoscaling(AutoscalingSpec.DOWNSCALE_TO_ZERO_DELAY,
            AutoscalingSpec::downscaleToZeroDelay, Presence.OPTIONAL);
    static final Field<Duration> LOOK_BACK_PERIOD = autoscaling(AutoscalingSpec.LOOK_BACK_PERIOD,
            AutoscalingSpec::lookBackPeriod, Presence.DEFAULT);
    static final Field<Double> UPSCALING_FACTOR = autoscaling("upscaling_factor",
            SettingKind.positive(AutoscalingSpec.MAX_UPSCALING_FACTOR), AutoscalingSpec::upscalingFactor,
            Presence.DEFAULT);
    static final Field<Double> DOWNSCALING_FACTOR = autoscaling("downscaling_factor", SettingKind.positive(1),
            AutoscalingSpec::downscalingFactor, Presence.DEFAULT);

    static final Field<Boolean> CACHE_ENABLED = new Field<>(Section.CACHE, "enabled", SettingKind.BOOLEAN,
            s -> s.cache().enabled(), Presence.DEFAULT);
    static final Field<Long> CACHE_MAX_BYTES = new Field<>(Section.CACHE, "max_bytes", SettingKind.SIZE,
            s -> s.cache().maxBytes(), Presence.DEFAULT);

    /** Every field, by section, in the order the API shows them and the state file writes them. */
    static final List<Field<?>> ALL = List.of(MODEL, VERSION, MAX_LENGTH, LONG_INPUTS, CHUNK_OVERLAP, CHUNK_REDUCTION,
            MAX_CHUNKS_PER_INPUT, NUM_REPLICAS, MIN_READY_REPLICAS, MAX_ONGOING_REQUESTS, MAX_QUEUED_REQUESTS,
            MAX_PENDING_TOKENS, PREDICTOR_THREADS, INTRA_OP_THREADS, LEND_IDLE_CORES, IDLE_SPIN, MAX_INPUTS_PER_REQUEST,
            MAX_TOKENS_PER_REQUEST, HEALTH_CHECK_PERIOD, HEALTH_CHECK_FAILURE_THRESHOLD, GRACEFUL_SHUTDOWN_TIMEOUT, REQUEST_TIMEOUT,
            BATCH_INVARIANCE, MAX_BATCH_SIZE, BATCH_WAIT_TIMEOUT, MAX_BATCH_TOKENS, ROLLING_UPDATE_FRACTION,
            MAX_MODELS_PER_REPLICA, MAX_MODEL_MEMORY,
            MIN_REPLICAS, MAX_REPLICAS_FIELD, INITIAL_REPLICAS, TARGET_ONGOING_REQUESTS, UPSCALE_DELAY, DOWNSCALE_DELAY,
            DOWNSCALE_TO_ZERO_DELAY, LOOK_BACK_PERIOD, UPSCALING_FACTOR, DOWNSCALING_FACTOR,
            CACHE_ENABLED, CACHE_MAX_BYTES);

    private static final Map<String, Field<?>> BY_PATH = byPath();

    private DeploymentFields() {
    }

    /** The fields of {@code section}, in table order. */
    static List<Field<?>> in(Section section) {
        return ALL.stream().filter(field -> field.section() == section).toList();
    }

    /** The field of {@code path} (snake_case, dotted within a nested section), or null. */
    static Field<?> named(String path) {
        return BY_PATH.get(path);
    }

    /** The spec {@code values} describe; one constructor per record, so each record checks its fields together. */
    static DeploymentSpec spec(String name, Values values) {
        return new DeploymentSpec(name,
                new ModelReference(values.get(MODEL), values.get(MAX_LENGTH), values.get(LONG_INPUTS),
                        values.get(CHUNK_OVERLAP), values.get(CHUNK_REDUCTION), values.get(MAX_CHUNKS_PER_INPUT)),
                values.get(VERSION),
                values.get(NUM_REPLICAS),
                new AdmissionSpec(values.get(MAX_ONGOING_REQUESTS), values.get(MAX_QUEUED_REQUESTS),
                        values.get(MAX_INPUTS_PER_REQUEST), values.get(REQUEST_TIMEOUT),
                        values.get(MAX_TOKENS_PER_REQUEST), values.get(MAX_PENDING_TOKENS)),
                new BatchingSpec(values.get(BATCH_INVARIANCE), values.get(MAX_BATCH_SIZE),
                        values.get(BATCH_WAIT_TIMEOUT), values.get(MAX_BATCH_TOKENS)),
                new PredictorSpec(values.get(PREDICTOR_THREADS), values.get(INTRA_OP_THREADS),
                        values.get(LEND_IDLE_CORES), values.get(IDLE_SPIN)),
                new HealthSpec(values.get(HEALTH_CHECK_PERIOD), values.get(HEALTH_CHECK_FAILURE_THRESHOLD),
                        values.get(MIN_READY_REPLICAS)),
                new RolloutSpec(values.get(ROLLING_UPDATE_FRACTION), values.get(GRACEFUL_SHUTDOWN_TIMEOUT)),
                AutoscalingSpec.OFF,
                MultiplexSpec.isGlob(values.get(MODEL))
                        ? new MultiplexSpec(values.get(MAX_MODELS_PER_REPLICA), values.get(MAX_MODEL_MEMORY))
                        : MultiplexSpec.OFF);
    }

    /** The autoscaling settings {@code values} describe. */
    static AutoscalingSpec autoscaling(Values values) {
        return new AutoscalingSpec(values.get(MIN_REPLICAS), values.get(MAX_REPLICAS_FIELD),
                values.get(INITIAL_REPLICAS), values.get(TARGET_ONGOING_REQUESTS), values.get(UPSCALE_DELAY),
                values.get(DOWNSCALE_DELAY), values.get(DOWNSCALE_TO_ZERO_DELAY), values.get(LOOK_BACK_PERIOD),
                values.get(UPSCALING_FACTOR), values.get(DOWNSCALING_FACTOR));
    }

    /** The result cache settings {@code values} describe. */
    static CacheSpec cache(Values values) {
        return new CacheSpec(values.get(CACHE_ENABLED), values.get(CACHE_MAX_BYTES));
    }

    /**
     * The default of every field of {@code section} that has one, as the config file writes it (docs/configuration.md's
     * tables; an optional field's default is unset and left out).
     */
    static Map<String, Object> defaults(Section section) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (Field<?> field : in(section)) {
            Object value = field.presence() == Presence.REQUIRED ? null : field.write(DEFAULTS);
            if (value != null) {
                defaults.put(field.key(), value);
            }
        }
        return defaults;
    }

    /** The spec under its config-file keys, durations as text: what the API shows and the state file stores. */
    static Map<String, Object> toMap(DeploymentSpec spec) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("name", spec.name());
        for (Field<?> field : in(Section.DEPLOYMENT)) {
            if (field == NUM_REPLICAS && spec.isAutoscaled()) {
                map.put(Section.AUTOSCALING.key, written(Section.AUTOSCALING, spec)); // replaces num_replicas
            } else {
                map.put(field.key(), field.write(spec));
            }
        }
        if (spec.isMultiplexed()) {
            map.remove(VERSION.key()); // each model's newest version
            map.putAll(written(Section.MULTIPLEX, spec));
        }
        map.put(Section.CACHE.key, written(Section.CACHE, spec));
        return map;
    }

    /** The fields of {@code section} in {@code spec} as the config file writes them, unset ones left out. */
    private static Map<String, Object> written(Section section, DeploymentSpec spec) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (Field<?> field : in(section)) {
            Object value = field.write(spec);
            if (value != null) {
                map.put(field.key(), value);
            }
        }
        return map;
    }

    /** The engine's range of {@code engine}'s field, capped at what one config may ask for. */
    private static IntRange tighter(IntRange engine, int max) {
        return new IntRange(engine.field(), engine.min(), Math.min(engine.max(), max));
    }

    private static Field<Integer> field(IntRange range, Function<DeploymentSpec, Integer> component) {
        return field(range.field(), SettingKind.whole(range), component);
    }

    private static Field<Duration> field(DurationRange range, Function<DeploymentSpec, Duration> component) {
        return field(range.field(), SettingKind.duration(range), component);
    }

    private static <T> Field<T> field(String key, SettingKind<T> kind, Function<DeploymentSpec, T> component) {
        return new Field<>(Section.DEPLOYMENT, key, kind, component, Presence.DEFAULT);
    }

    private static Field<Integer> autoscaling(IntRange range, Function<AutoscalingSpec, Integer> component,
            Presence presence) {
        return autoscaling(range.field(), SettingKind.whole(tighter(range, MAX_REPLICAS)), component, presence);
    }

    private static Field<Duration> autoscaling(DurationRange range, Function<AutoscalingSpec, Duration> component,
            Presence presence) {
        return autoscaling(range.field(), SettingKind.duration(range), component, presence);
    }

    private static <T> Field<T> autoscaling(String key, SettingKind<T> kind, Function<AutoscalingSpec, T> component,
            Presence presence) {
        return new Field<>(Section.AUTOSCALING, key, kind, s -> component.apply(s.autoscaling()), presence);
    }

    private static Map<String, Field<?>> byPath() {
        Map<String, Field<?>> byPath = new LinkedHashMap<>();
        ALL.forEach(field -> byPath.put(field.path(), field));
        return Map.copyOf(byPath);
    }

    /**
     * One key.
     *
     * @param section   where the key sits
     * @param key       the snake_case key within its section
     * @param kind      how its value is read, checked and written
     * @param component the spec component it stands for (a section's defaults when the spec has the section off: its
     *                  {@code OFF} value holds them)
     * @param presence  whether it may be left out
     */
    record Field<T>(Section section, String key, SettingKind<T> kind, Function<DeploymentSpec, T> component,
            Presence presence) {

        /** The key as errors name it: dotted within a nested section, {@code autoscaling.min_replicas}. */
        String path() {
            return section.key.isEmpty() ? key : section.key + "." + key;
        }

        /** The field's value in {@code spec} as the config file writes it, or null when unset. */
        Object write(DeploymentSpec spec) {
            T value = component.apply(spec);
            return value == null ? null : kind.write(value);
        }

        /**
         * The value {@code node} gives: absent, {@code base}'s value (null: the default); null for an optional field,
         * unset.
         *
         * @throws InvalidSpec naming {@link #path()} when the value is refused, or absent and required
         */
        T read(JsonNode node, DeploymentSpec base) {
            try {
                if (node == null) {
                    if (base == null && presence == Presence.REQUIRED) {
                        throw new SettingKind.Refused("is required");
                    }
                    return component.apply(base != null ? base : DEFAULTS);
                }
                return node.isNull() && presence == Presence.OPTIONAL ? null : kind.read(node);
            } catch (SettingKind.Refused e) {
                throw new InvalidSpec(path(), e.getMessage());
            }
        }
    }

    /** The typed values of one deployment's fields, filled by {@link DeploymentConfig}. */
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
}
