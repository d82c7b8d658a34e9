package dev.serval.deployment;

import dev.serval.cache.DeploymentCache;
import dev.serval.cache.ResultCache;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.health.FailureMonitor;
import dev.serval.model.Embedding;
import dev.serval.model.ModelSignature;
import dev.serval.request.CallContext;
import dev.serval.request.InferenceRequest;
import dev.serval.request.TensorIO;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/**
 * A deployment's requests on their way in and their answers on the way out: readiness and size checks, the mapping
 * of a request's tensors and of its answer, the hand-over to the {@link Router} with the request's deadline. The
 * contracts are {@link Deployment}'s ({@link Deployment#infer}, {@link Deployment#embed},
 * {@link Deployment#embedTokens}, {@link Deployment#submit},
 * {@link Deployment#checkAccepting}).
 *
 * <p>Which model judges a request: the one of the replica that runs it. Each routable replica carries its loaded
 * model in the routing snapshot; the replica validates a request's inputs when the request reaches it, and the
 * request's outputs are mapped with that model's tensor mapping. A model that loaded but has not warmed up, or failed
 * to, is in no snapshot and so judges nothing; during a rolling update, while both versions serve, a request is judged
 * by whichever version took it. The input side of the mapping depends only on the model's kind, which a deployment
 * never changes, so a request's tensors are mapped with the newest serving model's (while none serves, as
 * {@link AtZero#mapping} says). Checks made before routing against the model's signature (requested outputs, embedding
 * dimensions) are made only while every serving replica runs one model, and otherwise on the answer.
 *
 * <p>Results of text models go through the deployment's result cache while it has one ({@link CachedRequest}): per
 * input, hits answered from it, identical inputs coalesced, misses routed together.
 *
 * <p>Threads: any request thread; no state of its own. A request reads the routing snapshot once for all of this, and
 * the deployment's spec and status (volatile) as they are: no lock, no allocation beyond its own.
 */
final class Intake<I, O> {

    private final Deployment<I, O> deployment;
    private final Router<I, O> router;
    private final AtZero<I, O> atZero;
    private final DeploymentCache<O> cache;

    Intake(Deployment<I, O> deployment, Router<I, O> router, AtZero<I, O> atZero, DeploymentCache<O> cache) {
        this.deployment = deployment;
        this.router = router;
        this.atZero = atZero;
        this.cache = cache;
    }

    /** {@link Deployment#infer}. */
    CompletableFuture<Inference> infer(InferenceRequest request) {
        RoutingSnapshot<I, O> snapshot = router.snapshot();
        RoutableReplica<I, O> newest = snapshot.newest();
        TensorIO<I, O> io;
        if (newest != null) {
            io = newest.model().io();
        } else {
            DeploymentState state = deployment.state(snapshot);
            if (!accepts(state)) {
                throw notReady(state);
            }
            io = atZero.mapping();
        }
        if (request.outputs() != null) {
            Inference.checkRequested(request.outputs(), uniformSignature(snapshot));
        }
        List<I> inputs = io.inputs(request);
        CompletableFuture<List<O>> routed;
        try {
            routed = answer(snapshot, inputs, request.context().deadlineNanos());
        } catch (RuntimeException refused) {
            io.watch(inputs, CompletableFuture.failedFuture(refused));
            throw refused;
        }
        int count = inputs.size();
        CompletableFuture<Inference> answering = Answering.of(routed, answer -> {
            RoutableReplica<I, O> answered = answeredBy(routed);
            return answered == null ? new Inference(io.outputs(answer), deployment.spec().version(), count)
                    : new Inference(answered.model().io().outputs(answer), answered.version(), count);
        });
        io.watch(inputs, answering);
        return answering;
    }

    /** The replica whose model answered {@code routed} (as {@link Router#servedBy}, or a cached request's). */
    @SuppressWarnings("unchecked")
    private static <I, O> RoutableReplica<I, O> answeredBy(CompletableFuture<List<O>> routed) {
        return routed instanceof CachedRequest<?, ?> cached ? (RoutableReplica<I, O>) cached.answeredBy()
                : Router.servedBy(routed);
    }

    /** {@link Deployment#embed}. */
    @SuppressWarnings("unchecked")
    CompletableFuture<List<Embedding>> embed(List<String> texts, int dimensions, CallContext context) {
        RoutingSnapshot<I, O> snapshot = router.snapshot();
        ModelSignature uniform = uniformSignature(snapshot);
        if (uniform != null) {
            checkDimensions(dimensions, uniform.outputs().getFirst().shape().get(1), snapshot.newest());
        }
        CompletableFuture<?> submitted = answer(snapshot, (List<I>) texts, context.deadlineNanos());
        CompletableFuture<List<Embedding>> routed = (CompletableFuture<List<Embedding>>) submitted;
        if (dimensions == 0) {
            return routed;
        }
        return Answering.of(routed, embeddings -> {
            int width = embeddings.getFirst().vector().length;
            // The model that answered is the newest serving one, but for a rolling update's overlap: judged by it.
            return checkDimensions(dimensions, width, router.snapshot().newest()) ? embeddings
                    : embeddings.stream().map(embedding -> embedding.cut(dimensions)).toList();
        });
    }

    /** {@link Deployment#embedTokens}: routed past the result cache, whose entries hold no token vectors. */
    @SuppressWarnings("unchecked")
    CompletableFuture<List<Embedding>> embedTokens(List<String> texts, CallContext context) {
        CompletableFuture<?> submitted = route(router.snapshot(), (List<I>) texts, context.deadlineNanos());
        return Answering.of((CompletableFuture<List<Embedding>>) submitted, embeddings -> {
            for (int i = 0; i < embeddings.size(); i++) {
                Embedding embedding = embeddings.get(i);
                if (embedding.tokenVectors() == null) {
                    throw new InvalidInput("text " + i + " has no token embeddings: model '" + deployment.name()
                            + "' read it in windows (" + embedding.tokens() + " tokens, past its max_length, with "
                            + "long_inputs: chunk), or pools inside its graph; send texts within max_length");
                }
            }
            return embeddings;
        });
    }

    /**
     * Whether {@code requested} is the model's own width (or none was asked); false when the vectors are to be cut to
     * it, which {@code newest}'s model declares it may be ({@code matryoshka_dimensions}).
     *
     * @throws InvalidInput when it is neither, naming the widths there are
     */
    private boolean checkDimensions(int requested, long width, RoutableReplica<I, O> newest) {
        if (requested == 0 || requested == width) {
            return true;
        }
        List<Integer> declared = newest == null ? List.of() : newest.model().matryoshkaDimensions();
        if (declared.contains(requested)) {
            return false;
        }
        throw new InvalidInput("dimensions", "model '" + deployment.name() + "' returns " + width + " dimensions; "
                + "'dimensions' " + requested + " is not supported (" + (declared.isEmpty()
                ? "the model declares no matryoshka_dimensions to cut its vectors to)"
                : "it may be cut to " + declared + ")"));
    }

    /**
     * The outputs of {@code inputs}: through the deployment's result cache while it has one ({@link CachedRequest};
     * one volatile read and one branch while it has none), else routed as {@link #route} does.
     */
    private CompletableFuture<List<O>> answer(RoutingSnapshot<I, O> snapshot, List<I> inputs, long deadlineNanos) {
        ResultCache<O> results = cache.current();
        if (results == null) {
            return route(snapshot, inputs, deadlineNanos);
        }
        admit(snapshot, inputs);
        CachedRequest<I, O> cached = CachedRequest.start(this, snapshot, cache, results, inputs, deadlineNanos);
        if (cached != null) {
            return cached;
        }
        // No lookup (nothing serves yet, or two models do): the plain way, its results stored for the next requests.
        CompletableFuture<List<O>> routed = route(snapshot, inputs, deadlineNanos);
        cache.counted(0, inputs.size(), 0);
        routed.whenComplete((outputs, failure) -> {
            RoutableReplica<I, O> ran = Router.servedBy(routed);
            if (failure == null && ran != null) {
                for (int i = 0; i < inputs.size(); i++) {
                    results.put(ran.served(), (String) inputs.get(i), outputs.get(i));
                }
            }
        });
        return routed;
    }

    /**
     * {@link Deployment#submit} until {@code deadlineNanos} ({@link CallContext#deadlineNanos}), judging readiness by
     * {@code snapshot}, the one its caller read. Every routed request goes through here (a cached request's misses
     * too, its hits never): the router counts it at the tokens the newest serving model estimates
     * ({@code Model.admissionCost}, {@code max_pending_tokens}), or, while none serves, the last one
     * that did.
     */
    CompletableFuture<List<O>> route(RoutingSnapshot<I, O> snapshot, List<I> inputs, long deadlineNanos) {
        admit(snapshot, inputs);
        RoutableReplica<I, O> newest = snapshot.newest();
        long cost = newest != null ? newest.model().admissionCost(inputs) : atZero.admissionCost(inputs);
        CompletableFuture<List<O>> result = router.submit(inputs, deadlineNanos, cost);
        if (result.state() == Future.State.FAILED && Router.servedBy(result) == null
                && result.exceptionNow() instanceof InvalidInput refused) {
            // Refused by the validation of the replica it was routed to, before it ran (a replica records itself as
            // the one serving only once its run began): as synchronous as a size check.
            throw refused;
        }
        return result;
    }

    /** Refuses {@code inputs} when the deployment takes no request in the state {@code snapshot} shows, or by size. */
    private void admit(RoutingSnapshot<I, O> snapshot, List<I> inputs) {
        DeploymentState state = deployment.state(snapshot);
        if (!accepts(state)) {
            throw notReady(state);
        }
        DeploymentSpec current = deployment.spec();
        if (inputs.isEmpty()) {
            throw new InvalidInput("the request holds no inputs");
        }
        if (inputs.size() > current.admission().maxInputsPerRequest()) {
            throw new InvalidInput("the request holds " + inputs.size() + " inputs; model '" + current.name()
                    + "' takes at most " + current.admission().maxInputsPerRequest() + " per request");
        }
    }

    /** The deployment's result cache. */
    DeploymentCache<O> cache() {
        return cache;
    }

    /** {@link Deployment#recordOutcome}: reads the routing snapshot once, on failures only. */
    void recordOutcome(boolean serverFailure, FailureMonitor.Window failures) {
        if (serverFailure) {
            RoutableReplica<I, O> newest = router.snapshot().newest();
            if (newest != null && !newest.model().requestFailuresMarkUnhealthy()) {
                return;
            }
        }
        failures.record(serverFailure);
    }

    /** {@link Deployment#checkAccepting}. */
    void checkAccepting() {
        DeploymentState state = deployment.state(router.snapshot());
        if (!accepts(state)) {
            throw notReady(state);
        }
        router.refuseIfFull();
    }

    /**
     * Whether a request is taken in {@code state}: when a replica serves, and, for a deployment that queues while
     * none does (autoscaled, {@code min_replicas} 0), while it is at zero or its replica is starting.
     */
    private boolean accepts(DeploymentState state) {
        return state == DeploymentState.READY || (router.queuesWhileEmpty()
                && (state == DeploymentState.IDLE || state == DeploymentState.LOADING));
    }

    private NotReady notReady(DeploymentState state) {
        return NotServing.refusal(deployment.name(), state, deployment.status(), deployment.hasServed());
    }

    /**
     * What the model takes and returns when every replica of {@code snapshot} runs the same model; null while none
     * serves, or while a rolling update has two versions serving.
     */
    static ModelSignature uniformSignature(RoutingSnapshot<?, ?> snapshot) {
        RoutableReplica<?, ?> newest = snapshot.newest();
        return newest == null || !snapshot.servesOneModel() ? null : newest.model().signature();
    }
}
