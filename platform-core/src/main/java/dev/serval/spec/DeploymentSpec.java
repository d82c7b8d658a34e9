package dev.serval.spec;

import dev.serval.model.LoadOptions;
import dev.serval.model.LongInputs;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The desired state of one deployment: what it serves and how, grouped by concern, each group validated and holding
 * its own defaults ({@code DEFAULTS}). Every bound is finite, so a deployment never queues or waits without limit.
 * Bounds name the snake_case keys of the config file ({@link InvalidSpec#field()}); docs/configuration.md documents
 * each setting and its default. Further concerns (autoscaling, multiplexing) are further components.
 *
 * @param name        what callers call the model, e.g. {@code all-minilm-l6-v2}
 * @param model       the model and the loader options that change what is loaded; a change rolls the replicas
 * @param version     the model version; changing it rolls the replicas over to the new one; default {@code 1}
 * @param numReplicas replicas to keep RUNNING; default 1
 * @param admission   how much work the deployment takes in
 * @param batching    how predictors group inputs into inferences
 * @param predictors  the threads of one replica
 * @param health      how replicas are watched and how many must serve
 * @param rollout     how replicas are replaced and stopped
 * @param autoscaling how the replica count follows the load, or {@link AutoscalingSpec#OFF} for a fixed
 *                    {@code numReplicas}; on, {@code numReplicas} is the count the deployment starts with
 *                    ({@link AutoscalingSpec#initial()}) and the autoscaler moves it within
 *                    {@code [min_replicas, max_replicas]}
 * @param multiplex   for a deployment whose {@code model} is a glob over the repository's model names, how many of
 *                    the matching models it holds loaded ({@link MultiplexSpec}); {@link MultiplexSpec#OFF} for a
 *                    deployment of one model
 * @param cache       the result cache of a text model's deployment ({@link CacheSpec}); never rolls the replicas
 */
public record DeploymentSpec(
        String name,
        ModelReference model,
        String version,
        int numReplicas,
        AdmissionSpec admission,
        BatchingSpec batching,
        PredictorSpec predictors,
        HealthSpec health,
        RolloutSpec rollout,
        AutoscalingSpec autoscaling,
        MultiplexSpec multiplex,
        CacheSpec cache) {

    /**
     * Replicas one deployment may keep. Wider than what the config accepts ({@code serval.limits.*} and the edge's
     * per-deployment bound of 64 keep a server's thread count sane): the controller benchmarks run 1024.
     */
    public static final IntRange NUM_REPLICAS = new IntRange("num_replicas", 0, 1024);
    public static final String DEFAULT_VERSION = "1";
    public static final int DEFAULT_NUM_REPLICAS = 1;

    private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?");

    public DeploymentSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(admission, "admission");
        Objects.requireNonNull(batching, "batching");
        Objects.requireNonNull(predictors, "predictors");
        Objects.requireNonNull(health, "health");
        Objects.requireNonNull(rollout, "rollout");
        Objects.requireNonNull(autoscaling, "autoscaling (AutoscalingSpec.OFF when off)");
        Objects.requireNonNull(multiplex, "multiplex (MultiplexSpec.OFF when off)");
        Objects.requireNonNull(cache, "cache");
        if (!isName(name)) {
            throw new InvalidSpec("name", "must be 1-63 lower-case letters, digits, '.', '_' or '-', "
                    + "starting and ending with a letter or digit");
        }
        if (version.isBlank()) {
            throw new InvalidSpec("version", "must not be blank");
        }
        NUM_REPLICAS.check(numReplicas);
        if (autoscaling.enabled() && autoscaling.clamp(numReplicas) != numReplicas) {
            throw new InvalidSpec("initial_replicas", "is " + numReplicas + "; it must be between min_replicas ("
                    + autoscaling.minReplicas() + ") and max_replicas (" + autoscaling.maxReplicas() + ")");
        }
        if (multiplex.enabled() != MultiplexSpec.isGlob(model.name())) {
            throw new InvalidSpec(multiplex.enabled() ? "max_models_per_replica" : "model", multiplex.enabled()
                    ? "applies to a multiplexed deployment, whose model is a glob such as 't-*'; '" + model.name()
                    + "' names one model"
                    : "'" + model.name() + "' is a glob: a multiplexed deployment, which needs its multiplexing "
                    + "settings");
        }
    }

    /** Whether {@code name} may name a deployment: 1-63 lower-case letters, digits, '.', '_' or '-'. */
    public static boolean isName(String name) {
        return NAME.matcher(name).matches();
    }

    /** A deployment with the default result cache. */
    public DeploymentSpec(String name, ModelReference model, String version, int numReplicas, AdmissionSpec admission,
            BatchingSpec batching, PredictorSpec predictors, HealthSpec health, RolloutSpec rollout,
            AutoscalingSpec autoscaling, MultiplexSpec multiplex) {
        this(name, model, version, numReplicas, admission, batching, predictors, health, rollout, autoscaling,
                multiplex, CacheSpec.DEFAULTS);
    }

    /** A deployment with the default multiplexing settings when {@code model} is a glob. */
    public DeploymentSpec(String name, ModelReference model, String version, int numReplicas, AdmissionSpec admission,
            BatchingSpec batching, PredictorSpec predictors, HealthSpec health, RolloutSpec rollout,
            AutoscalingSpec autoscaling) {
        this(name, model, version, numReplicas, admission, batching, predictors, health, rollout, autoscaling,
                MultiplexSpec.isGlob(model.name()) ? MultiplexSpec.DEFAULTS : MultiplexSpec.OFF);
    }

    /** A deployment of a fixed {@code numReplicas}, without autoscaling. */
    public DeploymentSpec(String name, ModelReference model, String version, int numReplicas, AdmissionSpec admission,
            BatchingSpec batching, PredictorSpec predictors, HealthSpec health, RolloutSpec rollout) {
        this(name, model, version, numReplicas, admission, batching, predictors, health, rollout,
                AutoscalingSpec.OFF);
    }

    /** A spec of model {@code modelName} with every other setting at its default. */
    public static DeploymentSpec defaults(String name, String modelName) {
        return new DeploymentSpec(name, ModelReference.named(modelName), DEFAULT_VERSION, DEFAULT_NUM_REPLICAS,
                AdmissionSpec.DEFAULTS, BatchingSpec.DEFAULTS, PredictorSpec.DEFAULTS, HealthSpec.DEFAULTS,
                RolloutSpec.DEFAULTS);
    }

    /** With model {@code next}; a glob keeps (or takes the default) multiplexing settings, a model name drops them. */
    public DeploymentSpec withModel(ModelReference next) {
        MultiplexSpec settings = !MultiplexSpec.isGlob(next.name()) ? MultiplexSpec.OFF
                : multiplex.enabled() ? multiplex : MultiplexSpec.DEFAULTS;
        return next.equals(model) ? this : with(c -> {
            c.model = next;
            c.multiplex = settings;
        });
    }

    public DeploymentSpec withVersion(String next) {
        return next.equals(version) ? this : with(c -> c.version = next);
    }

    /** A fixed count of {@code next} replicas: autoscaling, if any, is off. */
    public DeploymentSpec withNumReplicas(int next) {
        return next == numReplicas && !autoscaling.enabled() ? this : with(c -> {
            c.numReplicas = next;
            c.autoscaling = AutoscalingSpec.OFF;
        });
    }

    /**
     * Autoscaling by {@code next} (starting at its {@link AutoscalingSpec#initial()} count), or, with
     * {@link AutoscalingSpec#OFF}, a fixed count of the current {@code numReplicas}.
     */
    public DeploymentSpec withAutoscaling(AutoscalingSpec next) {
        return next.equals(autoscaling) ? this : with(c -> {
            c.numReplicas = next.enabled() ? next.initial() : numReplicas;
            c.autoscaling = next;
        });
    }

    public DeploymentSpec withAdmission(AdmissionSpec next) {
        return next.equals(admission) ? this : with(c -> c.admission = next);
    }

    public DeploymentSpec withBatching(BatchingSpec next) {
        return next.equals(batching) ? this : with(c -> c.batching = next);
    }

    public DeploymentSpec withPredictors(PredictorSpec next) {
        return next.equals(predictors) ? this : with(c -> c.predictors = next);
    }

    public DeploymentSpec withHealth(HealthSpec next) {
        return next.equals(health) ? this : with(c -> c.health = next);
    }

    public DeploymentSpec withRollout(RolloutSpec next) {
        return next.equals(rollout) ? this : with(c -> c.rollout = next);
    }

    /** With multiplexing settings {@code next} (for a deployment whose model is a glob; else {@code OFF}). */
    public DeploymentSpec withMultiplex(MultiplexSpec next) {
        return next.equals(multiplex) ? this : with(c -> c.multiplex = next);
    }

    public DeploymentSpec withCache(CacheSpec next) {
        return next.equals(cache) ? this : with(c -> c.cache = next);
    }

    /**
     * A copy of this spec with the components {@code change} sets, checked by the canonical constructor: the one place
     * that lists every component, so a wither names only what it changes (JEP 468's derived record creation,
     * {@code spec with { batching = next; }}, written by hand). Withers decide "no change" before calling it.
     */
    private DeploymentSpec with(Consumer<Components> change) {
        Components c = new Components(this);
        change.accept(c);
        return new DeploymentSpec(name, c.model, c.version, c.numReplicas, c.admission, c.batching, c.predictors,
                c.health, c.rollout, c.autoscaling, c.multiplex, c.cache);
    }

    /** The components a derivation may change, starting as the spec's own; local to one {@link #with} call. */
    private static final class Components {
        ModelReference model;
        String version;
        int numReplicas;
        AdmissionSpec admission;
        BatchingSpec batching;
        PredictorSpec predictors;
        HealthSpec health;
        RolloutSpec rollout;
        AutoscalingSpec autoscaling;
        MultiplexSpec multiplex;
        CacheSpec cache;

        Components(DeploymentSpec spec) {
            model = spec.model;
            version = spec.version;
            numReplicas = spec.numReplicas;
            admission = spec.admission;
            batching = spec.batching;
            predictors = spec.predictors;
            health = spec.health;
            rollout = spec.rollout;
            autoscaling = spec.autoscaling;
            multiplex = spec.multiplex;
            cache = spec.cache;
        }
    }

    /**
     * What this deployment asks of its model when it loads: the model reference's loader options plus the predictors'
     * intra-op threads and batch invariance (the descriptor's own {@code max_length} applies where the reference
     * leaves it at 0). Two specs with equal options load the same model.
     */
    public LoadOptions loadOptions() {
        return LoadOptions.defaults()
                .withMaxLength(model.maxLength())
                .withLongInputs(model.longInputs() == LongInputPolicy.CHUNK
                        ? LongInputs.chunk(model.chunkOverlap(), model.maxChunksPerInput())
                        : LongInputs.truncate())
                .withChunkReduction(model.chunkReduction())
                .withIntraOpThreads(predictors.intraOpThreads())
                .withIdleIntraOpThreads(predictors.idleIntraOpThreads())
                .withBatchInvariance(batching.batchInvariance());
    }

    /** Replicas a rolling update starts at a time: {@code rollingUpdateFraction} of {@code numReplicas}, at least 1. */
    public int rollingUpdateBatch() {
        return rollingUpdateBatch(numReplicas);
    }

    /** Replicas a rolling update of {@code desired} replicas starts at a time: its fraction of them, at least 1. */
    public int rollingUpdateBatch(int desired) {
        return Math.max(1, (int) Math.ceil(rollout.rollingUpdateFraction() * desired));
    }

    /** Whether the deployment serves every repository model its glob matches ({@link #multiplex()} is on). */
    public boolean isMultiplexed() {
        return multiplex.enabled();
    }

    /**
     * Whether this deployment's glob (its {@code model}, when multiplexed) matches {@code name}, without backtracking
     * ({@link MultiplexSpec#matches}); false for a deployment of one model.
     */
    public boolean globMatches(String name) {
        return isMultiplexed() && MultiplexSpec.matches(model.name(), name);
    }

    /** Whether the replica count follows the load ({@link #autoscaling()} is on). */
    public boolean isAutoscaled() {
        return autoscaling.enabled();
    }

    /** The most replicas this deployment can run: {@code max_replicas} when autoscaled, else {@code num_replicas}. */
    public int maxReplicas() {
        return autoscaling.enabled() ? autoscaling.maxReplicas() : numReplicas;
    }

    /** The fewest replicas this deployment keeps: {@code min_replicas} when autoscaled, else {@code num_replicas}. */
    public int minReplicas() {
        return autoscaling.enabled() ? autoscaling.minReplicas() : numReplicas;
    }

    /**
     * Whether replicas built for {@code other} can keep serving under this spec: same model reference, version,
     * threads, per-replica admission limits and batch invariance. The other settings never call for new replicas
     * (running replicas take a new batch size, batch wait and idle spin over in place).
     */
    public boolean sameReplicaShape(DeploymentSpec other) {
        return model.equals(other.model) && version.equals(other.version) && predictors.sameThreads(other.predictors)
                && admission.maxOngoingRequests() == other.admission.maxOngoingRequests()
                && admission.maxInputsPerRequest() == other.admission.maxInputsPerRequest()
                && batching.batchInvariance() == other.batching.batchInvariance();
    }
}
