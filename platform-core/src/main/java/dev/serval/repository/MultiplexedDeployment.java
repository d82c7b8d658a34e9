package dev.serval.repository;

import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.error.NotReady;
import dev.serval.error.UnknownDeployment;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.multiplex.MultiplexScaling;
import dev.serval.multiplex.Multiplexer;
import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.DeploymentStatus;
import dev.serval.spec.ModelReference;
import dev.serval.spec.MultiplexSpec;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A multiplexed deployment as the engine runs it, the one type the edge holds of it: the repository models its glob
 * matches ({@link GlobCatalog}), each served, while loaded, by a deployment of that model under the model's own name
 * with as many replicas as hold it, created on the model's first request with none and given its replicas when the
 * {@link Multiplexer} places it; its autoscaling ({@link MultiplexScaling}) is registered with the engine's
 * autoscaler. So a multiplexed model is served exactly like any deployment (router, admission, batching, health,
 * rolling updates, meters under its own name), and requests that arrive while it loads wait in its queue.
 *
 * <p>Each model is a {@link Member}: its deployment, kind, current spec and pin, with what the edge keeps beside it
 * ({@code H}, made once per model by the function given at creation). A request finds a model's member without
 * pinning it ({@link #model}), pins it once it is valid and about to run ({@link Member#pin}) and releases it once it
 * ended ({@link Member#release}).
 *
 * <p>Threads: the catalog's scan runs on the multiplexer's refresher thread (and once at creation); the hosting
 * methods run under the multiplexer's lock on request threads (never blocking: creating a deployment and changing its
 * replica count only hand work to the controller) except closing a model, on the multiplexer's closer thread or the
 * closing thread. {@link #update} and {@link #close} are called by one config change at a time; a model's spec
 * ({@link Member#spec}) is written only under the multiplexer's lock ({@link #update} takes it) and read by any
 * thread.
 */
public final class MultiplexedDeployment<H> implements AutoCloseable {

    private final String name;
    private final String glob;
    private final ServingEngine engine;
    private final ModelRepository repository;
    private final Function<Member<H>, H> edge;
    private final GlobCatalog catalog;
    private final Multiplexer<Member<H>> multiplexer;
    private final MultiplexScaling scaling;
    /** The current config; written by the config change ({@link #update}), read by any thread. */
    private volatile DeploymentSpec spec;

    /**
     * Scans the repository once (so that the first requests find their models), starts the multiplexer's refresher
     * thread and registers the deployment with the engine's autoscaler.
     *
     * @param spec       the deployment's config: its {@code model} is the glob
     * @param repository where its models are, and what loads them
     * @param edge       what the edge keeps beside one model's deployment, made once per model when it is first
     *                   asked for, under the multiplexer's lock (must not block)
     */
    public MultiplexedDeployment(DeploymentSpec spec, ServingEngine engine, ModelRepository repository,
            MeterRegistry registry, Function<Member<H>, H> edge) {
        this.name = spec.name();
        this.glob = spec.model().name();
        this.spec = spec;
        this.engine = engine;
        this.repository = repository;
        this.edge = edge;
        this.catalog = new GlobCatalog(repository, name, glob, this::servedKind);
        this.multiplexer = new Multiplexer<>(name, spec.numReplicas(), spec.multiplex(), new Hosting(), catalog,
                engine.settings().multiplexTuning(), System::nanoTime, registry);
        this.scaling = new MultiplexScaling(multiplexer, spec);
        engine.autoscaler().register(scaling);
    }

    /** The kind {@code model} is served as, or null while it is not served. */
    private ModelKind servedKind(String model) {
        // Null during the first scan, which the multiplexer's constructor runs: no model is served yet.
        Member<H> served = multiplexer == null ? null : multiplexer.find(model);
        return served == null ? null : served.kind;
    }

    public String name() {
        return name;
    }

    public DeploymentSpec spec() {
        return spec;
    }

    /** The autoscaler's latest view; empty while not autoscaled or before its first decision. */
    public Optional<DeploymentStatus.Autoscaling> autoscaling() {
        return scaling.status();
    }

    /**
     * Whether the deployment's glob matches {@code model} (whether or not the repository holds it). A client's name is
     * checked to be a model name first (bounded length and alphabet), then matched without backtracking.
     */
    public boolean globMatches(String model) {
        return DeploymentSpec.isName(model) && spec.globMatches(model);
    }

    /**
     * What the edge keeps beside the deployment serving {@code model}, neither pinned nor loaded: a request pins it
     * once it is valid and about to run ({@link Member#pin}), and metadata is read from it without a load; null when
     * the repository holds no model of that name that the glob matches (as of the last scan).
     *
     * @throws NotReady when the deployment is closed
     */
    public H model(String model) {
        Multiplexer.Entry<Member<H>> entry = multiplexer.entry(model);
        return entry == null ? null : entry.handle().edge;
    }

    /** Takes a changed config (the glob stays): bounds, replica count and every model's settings. */
    public void update(DeploymentSpec next) {
        spec = next;
        int replicas = scaling.replicasAfter(next);
        // Under the multiplexer's lock, which its hosting calls hold too: a model's spec is never written by both.
        synchronized (multiplexer) {
            multiplexer.configure(replicas, next.multiplex());
            for (Member<H> model : multiplexer.handles()) {
                DeploymentSpec current = model.spec;
                DeploymentSpec changed = modelSpec(next, model.name(), current.version(), current.numReplicas());
                model.spec = changed;
                model.deployment.update(changed);
            }
        }
    }

    /** Closes every model's deployment (each drains its requests) and the multiplexer. */
    @Override
    public void close() {
        engine.autoscaler().unregister(scaling);
        multiplexer.close();
    }

    // --- status ----------------------------------------------------------------------------------------------------

    /** The replica count now (the autoscaler's when autoscaled). */
    public int replicas() {
        return multiplexer.replicas();
    }

    /** The repository models the glob matched at the last scan, by name. */
    public List<String> modelsMatching() {
        return multiplexer.candidates().keySet().stream().sorted().toList();
    }

    /** Whether the last scan saw {@code model} among the repository's matching models. */
    public boolean matches(String model) {
        return multiplexer.matches(model);
    }

    /**
     * What the edge keeps beside {@code model} if it was ever asked for (loaded or not), without creating, pinning
     * or loading it; else null.
     */
    public H find(String model) {
        Member<H> member = multiplexer.find(model);
        return member == null ? null : member.edge;
    }

    /** Models loaded now, summed over replicas. */
    public int modelsLoaded() {
        return multiplexer.loadedCount();
    }

    /** Requests running on or waiting for the deployment's models: the sum over its models. */
    public int ongoingRequests() {
        return multiplexer.ongoingRequests();
    }

    /** What each replica holds, by replica index, most recently used first; every replica listed, empty ones too. */
    public List<List<String>> replicaModels() {
        return multiplexer.replicaModels().stream().map(Multiplexer.ReplicaModels::models).toList();
    }

    /** What the edge keeps beside every model asked for so far (loaded or not). */
    public List<H> models() {
        return multiplexer.handles().stream().map(member -> member.edge).toList();
    }

    /** The replicas that hold {@code model} now, in the order it was loaded onto them; empty when none does. */
    public List<Integer> replicasOf(String model) {
        return multiplexer.replicasOf(model);
    }

    /** Whether {@code model} waits for room: asked for, no replica holds it, and none could be made free yet. */
    public boolean waitsForRoom(String model) {
        return multiplexer.waitsForRoom(model);
    }

    /** The versions the last scan skipped, by model and version. */
    public List<GlobCatalog.NotServed> notServed() {
        return catalog.notServed();
    }

    /**
     * One model of the deployment: the deployment that serves it, its kind and current spec, and its pin (the
     * multiplexer's entry, set once before the model is published, so every request sees it).
     */
    public static final class Member<H> {

        private final Deployment<Object, Object> deployment;
        private final ModelKind kind;
        /** Written under the multiplexer's lock (its hosting calls, a config change), read by any thread. */
        private volatile DeploymentSpec spec;
        /**
         * The multiplexer's entry and the edge's handle: each set once, under the multiplexer's lock, before the
         * multiplexer publishes the entry (its table is replaced through an AtomicReference), so every request that
         * finds the member sees both.
         */
        private Multiplexer.Entry<Member<H>> pin;
        private H edge;

        private Member(Deployment<Object, Object> deployment, ModelKind kind, DeploymentSpec spec) {
            this.deployment = deployment;
            this.kind = kind;
            this.spec = spec;
        }

        public String name() {
            return deployment.name();
        }

        public Deployment<Object, Object> deployment() {
            return deployment;
        }

        public ModelKind kind() {
            return kind;
        }

        /** The current spec of the model's deployment. */
        public DeploymentSpec spec() {
            return spec;
        }

        /**
         * Pins the model for one request that is valid and about to run, and starts its load if no replica holds it
         * (the caller {@link #release}s it once the request ended). A request refused before this point loads nothing
         * and evicts nothing.
         *
         * @throws UnknownDeployment when the model left the repository since the request found it
         * @throws NotReady         when it can never load (larger than {@code max_model_memory}) or its
         *     deployment is shutting down
         */
        public void pin() {
            if (!pin.acquire()) {
                throw new UnknownDeployment(name());
            }
        }

        /** Gives back the pin a request took ({@link #pin}); exactly once per pin. */
        public void release() {
            pin.release();
        }
    }

    /** How the multiplexer drives the models' deployments; under its lock but {@link #close(Member)}. */
    private final class Hosting implements Multiplexer.Hosting<Member<H>> {

        @Override
        public Member<H> create(String model, String version) {
            ModelKind kind = catalog.kind(model);
            if (kind == null) {
                throw new NotReady("model '" + model + "' is being rescanned; retry");
            }
            DeploymentSpec modelSpec = modelSpec(spec, model, version, 0);
            Deployment<Object, Object> deployment;
            try {
                deployment = engine.deployOnDemand(modelSpec, MultiplexedDeployment.this::load, kind);
            } catch (IllegalArgumentException e) {
                throw new NotReady("model '" + model + "' is still being unloaded after it left the repository; retry");
            }
            Member<H> member = new Member<>(deployment, kind, modelSpec);
            member.edge = edge.apply(member);
            return member;
        }

        @Override
        public void bound(Member<H> model, Multiplexer.Entry<Member<H>> entry) {
            model.pin = entry;
        }

        @Override
        public CompletableFuture<Void> replicas(Member<H> model, int count) {
            DeploymentSpec next = model.spec.withNumReplicas(count);
            model.spec = next;
            model.deployment.update(next);
            return model.deployment.serving();
        }

        @Override
        public void update(Member<H> model, String version) {
            DeploymentSpec next = model.spec.withVersion(version);
            model.spec = next;
            model.deployment.update(next);
        }

        @Override
        public int ongoing(Member<H> model) {
            return model.deployment.ongoingRequests();
        }

        @Override
        public int queued(Member<H> model) {
            return model.deployment.queuedRequests();
        }

        @Override
        public int serving(Member<H> model) {
            return model.deployment.routableReplicas();
        }

        @Override
        public int capacity(Member<H> model) {
            return model.spec.admission().maxOngoingRequests();
        }

        @Override
        public boolean failed(Member<H> model) {
            return model.deployment.state() == DeploymentState.FAILED;
        }

        @Override
        public void close(Member<H> model) {
            model.deployment.close();
        }
    }

    /**
     * Loads one model's deployment from the repository: exactly the spec the engine hands it (once per version, or
     * per replica for the kinds that must, {@link ServingEngine#loadsPerReplica}).
     */
    @SuppressWarnings("unchecked")
    private Model<Object, Object> load(DeploymentSpec spec) throws Exception {
        return (Model<Object, Object>) repository.load(spec);
    }

    /** The spec of one model's deployment: the multiplexed deployment's settings, for that model and version. */
    static DeploymentSpec modelSpec(DeploymentSpec multiplexed, String model, String version, int replicas) {
        ModelReference options = multiplexed.model();
        return new DeploymentSpec(model, new ModelReference(model, options.maxLength(), options.longInputs(),
                options.chunkOverlap(), options.chunkReduction(), options.maxChunksPerInput()), version, replicas,
                multiplexed.admission(), multiplexed.batching(), multiplexed.predictors(),
                multiplexed.health().withMinReadyReplicas(Math.min(1, multiplexed.health().minReadyReplicas())),
                multiplexed.rollout(), AutoscalingSpec.OFF, MultiplexSpec.OFF, multiplexed.cache());
    }
}
