package dev.serval.compose;

import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.Inference;
import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.model.Composite;
import dev.serval.model.ModelSignature;
import dev.serval.model.PipelineStep;
import dev.serval.model.TensorSignature;
import dev.serval.request.Invocation;
import dev.serval.spec.DeploymentState;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * {@code kind: pipeline}: a request runs through deployments in turn, each step through a {@link Handle} (the step's
 * router and admission, the request's deadline and id, cancellation when the request ends). The first step gets the
 * request's tensors; each later step gets the previous step's outputs (or, with {@code from: request}, the request's
 * tensors again), renamed by its {@code inputs} mapping and narrowed to the inputs the step's model declares (all of
 * them when it declares none); the last step's outputs are the answer. A routed step ({@link PipelineStep.Route})
 * chooses its deployment by the value of one output of the previous step, the same for every input of the request.
 *
 * <p>Checked when it loads ({@link #load}): every deployment a step may call exists and is not the pipeline, steps
 * still starting are waited for (within a bound), none has failed, and, as far as the steps' metadata tells, every
 * input of a step is among the tensors it is given (after renaming) with the same datatype, every renamed tensor
 * exists, and a route's tensor is a BYTES output of the step before. Its metadata shows the first step's inputs and the
 * last step's outputs (a routed last step: its first deployment's).
 *
 * <p>Threads: a predictor thread runs one request at a time, waiting for each step's answer (a pipeline replica runs
 * as many requests at once as it has predictor threads; its own work is renaming). Steps are looked up on every call.
 */
public final class PipelineModel extends CompositeModel {

    /** The OIP platform string reported in metadata. */
    public static final String PLATFORM = "serval_pipeline";

    /** How long a load waits for a step's deployment to appear. */
    private static final Duration APPEAR_WAIT = Duration.ofSeconds(5);

    private final String name;
    private final List<Stage> stages;

    private PipelineModel(String name, List<Stage> stages, ModelSignature signature, OutstandingCalls outstanding) {
        super(signature, outstanding);
        this.name = name;
        this.stages = stages;
    }

    /**
     * Checks the pipeline against its steps as they are now and makes their handles.
     *
     * @param readyWait how long to wait for a step that is still starting
     * @throws IllegalArgumentException naming the step and the problem
     */
    public static PipelineModel load(Composition composition, Composite.Pipeline pipeline, Duration readyWait) {
        String name = composition.deployment();
        List<Stage> stages = new ArrayList<>();
        OutstandingCalls outstanding = new OutstandingCalls();
        ModelSignature request = null; // what the first step takes: the request's tensors
        ModelSignature previous = null; // what the step before returns, as far as known
        for (int i = 0; i < pipeline.steps().size(); i++) {
            PipelineStep step = pipeline.steps().get(i);
            String where = "pipeline '" + name + "' step " + (i + 1) + " ('" + step.label() + "')";
            Map<String, Handle> handles = new LinkedHashMap<>();
            List<ModelSignature> signatures = new ArrayList<>();
            for (String target : step.targets()) {
                String at = step.route() == null ? where : where + " case '" + target + "'";
                if (target.equals(name)) {
                    throw new IllegalArgumentException(at + " calls the pipeline itself");
                }
                Deployment<?, ?> deployment = find(composition.callees(), target, readyWait);
                if (deployment == null) {
                    throw new IllegalArgumentException(at + ": no deployment is called '" + target
                            + "'; deploy it before the pipeline");
                }
                ModelSignature signature = awaitSignature(deployment, at, readyWait);
                if (i > 0) {
                    checkInputs(at, step, step.fromRequest() ? request : previous,
                            step.fromRequest() ? "the request"
                                    : "step " + i + " ('" + pipeline.steps().get(i - 1).label() + "')", signature);
                }
                handles.put(target, new Handle(name, target, composition.callees(), outstanding));
                signatures.add(signature);
            }
            if (step.route() != null) {
                checkRoute(where, step.route(), previous, i, i == 0 ? "" : pipeline.steps().get(i - 1).label());
            }
            if (i == 0) {
                ModelSignature first = signatures.getFirst();
                request = first == null ? null : new ModelSignature(first.platform(), List.of(), first.inputs());
            }
            previous = sameOutputs(signatures);
            stages.add(new Stage(step, handles));
        }
        ModelSignature first = request;
        ModelSignature last = previous;
        return new PipelineModel(name, List.copyOf(stages), new ModelSignature(PLATFORM,
                first == null ? List.of() : first.outputs(), last == null ? List.of() : last.outputs()), outstanding);
    }

    /**
     * The step's deployment, waiting a moment for one created with the pipeline (a config that creates both: the
     * pipeline's replica may start before the server publishes its steps); null when none appears.
     */
    private static Deployment<?, ?> find(Callees callees, String name, Duration wait) {
        long deadline = System.nanoTime() + Math.min(wait.toNanos(), APPEAR_WAIT.toNanos());
        Deployment<?, ?> found;
        while ((found = callees.find(name)) == null && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20); // a launcher thread, loading: nothing to wait on but the server's next publication
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return found;
    }

    /** The step's signature once it serves: waits while it starts; null when it is at zero and never served. */
    private static ModelSignature awaitSignature(Deployment<?, ?> target, String where, Duration wait) {
        if (target.state() == DeploymentState.LOADING) {
            try {
                target.serving().get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new IllegalArgumentException(where + " did not become ready within " + wait.toSeconds() + " s");
            } catch (ExecutionException e) {
                throw new IllegalArgumentException(where + " is not serving: " + e.getCause().getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(where + ": interrupted while waiting for it to become ready");
            }
        }
        DeploymentState state = target.state();
        if (state == DeploymentState.FAILED || state == DeploymentState.STOPPED) {
            throw new IllegalArgumentException(where + " is " + state + target.failure().map(f -> ": " + f).orElse(""));
        }
        return target.signature().orElse(null);
    }

    /** The outputs every one of {@code signatures} returns, when they agree and are known; else null. */
    private static ModelSignature sameOutputs(List<ModelSignature> signatures) {
        ModelSignature first = signatures.getFirst();
        for (ModelSignature other : signatures) {
            if (other == null || first == null || !other.outputs().equals(first.outputs())) {
                return null;
            }
        }
        return first;
    }

    /**
     * Checks that a step's inputs are among the tensors it is given ({@code given}'s outputs, renamed), as far as both
     * say.
     */
    private static void checkInputs(String where, PipelineStep step, ModelSignature given, String source,
            ModelSignature to) {
        if (given == null || given.outputs().isEmpty()) {
            return; // the source does not say what it holds (no-op, a handler that declares nothing, a routed step)
        }
        Set<String> outputs = given.outputs().stream().map(TensorSignature::name).collect(Collectors.toSet());
        for (String renamed : step.inputs().keySet()) {
            if (!outputs.contains(renamed)) {
                throw new IllegalArgumentException(where + " maps '" + renamed + "', which " + source
                        + " does not " + (source.equals("the request") ? "hold" : "return") + "; it "
                        + (source.equals("the request") ? "holds " : "returns ") + names(given.outputs()));
            }
        }
        if (to == null || to.inputs().isEmpty()) {
            return;
        }
        Map<String, TensorSignature> available = new HashMap<>();
        for (TensorSignature output : given.outputs()) {
            available.put(step.inputs().getOrDefault(output.name(), output.name()), output);
        }
        for (TensorSignature input : to.inputs()) {
            TensorSignature found = available.get(input.name());
            if (found == null) {
                throw new IllegalArgumentException(where + " takes '" + input.name() + "', which " + source
                        + " does not " + (source.equals("the request") ? "hold (it holds " : "return (it returns ")
                        + names(given.outputs()) + "); map one of them with inputs: {from: " + input.name() + "}");
            }
            if (!found.datatype().equals(input.datatype())) {
                throw new IllegalArgumentException(where + " takes '" + input.name() + "' as " + input.datatype()
                        + "; " + source + " gives '" + found.name() + "' as " + found.datatype());
            }
        }
    }

    /** Checks that a route's tensor is a BYTES output of the step before, as far as that step says. */
    private static void checkRoute(String where, PipelineStep.Route route, ModelSignature previous, int index,
            String before) {
        if (index == 0) {
            throw new IllegalArgumentException(where + ": the first step cannot route; a route chooses by an output "
                    + "of the step before it");
        }
        if (previous == null || previous.outputs().isEmpty()) {
            return;
        }
        TensorSignature on = previous.outputs().stream().filter(t -> t.name().equals(route.on())).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(where + " routes on '" + route.on() + "', which step "
                        + index + " ('" + before + "') does not return; it returns " + names(previous.outputs())));
        if (!on.datatype().equals("BYTES")) {
            throw new IllegalArgumentException(where + " routes on '" + route.on() + "', which step " + index + " ('"
                    + before + "') returns as " + on.datatype() + "; a route chooses by a BYTES value");
        }
    }

    private static String names(List<TensorSignature> tensors) {
        return tensors.stream().map(t -> "'" + t.name() + "'").collect(Collectors.joining(", "));
    }

    /** Every deployment a step may call, in order (status views). */
    public List<String> steps() {
        return stages.stream().flatMap(stage -> stage.handles().keySet().stream()).toList();
    }

    @Override
    public void close() {
    }

    /** Runs the steps in turn; null when the request ended meanwhile (its answer is discarded). */
    @Override
    Tensors answer(Invocation invocation) throws Exception {
        Tensors current = invocation.tensors();
        for (int i = 0; i < stages.size(); i++) {
            if (invocation.isEnded()) {
                return null;
            }
            Stage stage = stages.get(i);
            Handle handle = stage.choose(current, name, i + 1);
            Tensors given = stage.step().fromRequest() ? invocation.tensors() : current;
            CompletableFuture<Inference> call = i == 0 ? handle.infer(invocation, given)
                    : handle.infer(invocation, callee -> stage.inputs(given, callee));
            try {
                current = call.get().outputs();
            } catch (CancellationException e) {
                return null; // the request ended: its end cancelled the step
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        }
        return current;
    }

    /**
     * One step: its handles (one, or a route's), and how the tensors it is given become its inputs.
     *
     * @param handles the step's deployment's handle, or each of its route's, by deployment name
     */
    private record Stage(PipelineStep step, Map<String, Handle> handles) {

        /**
         * The handle this request's step calls: the step's own, or the one its route chooses by the previous step's
         * outputs.
         *
         * @throws InvalidInput       when the route's value is not one of its cases (and it has no default), or the
         *                            request's inputs give several values
         * @throws InferenceFailed    when the previous step did not return the route's tensor as BYTES
         */
        Handle choose(Tensors previous, String pipeline, int number) {
            PipelineStep.Route route = step.route();
            if (route == null) {
                return handles.get(step.deployment());
            }
            String where = "pipeline '" + pipeline + "' step " + number + " (route on '" + route.on() + "')";
            Tensor on = previous.get(route.on()).orElse(null);
            if (on == null || !(on.data() instanceof String[] values) || values.length == 0) {
                throw new InferenceFailed(where + ": step " + (number - 1) + " returned no BYTES '" + route.on()
                        + "' to route on", null);
            }
            String value = values[0];
            for (String other : values) {
                if (!other.equals(value)) {
                    throw new InvalidInput(where + ": the request's inputs route to '" + value + "' and '" + other
                            + "'; a routed pipeline takes inputs that route the same way (send them apart)");
                }
            }
            String target = route.cases().getOrDefault(value, route.otherwise());
            if (target == null) {
                throw new InvalidInput(where + ": no case for '" + truncated(value) + "'; the cases are "
                        + route.cases().keySet().stream().sorted().toList());
            }
            return handles.get(target);
        }

        private static String truncated(String value) {
            return value.length() <= 64 ? value : value.substring(0, 64) + "...";
        }

        /** The tensors it is given, renamed, and narrowed to the inputs {@code callee} declares (null: unknown). */
        Tensors inputs(Tensors given, ModelSignature callee) {
            Map<String, String> renames = step.inputs();
            if (renames.isEmpty() && (callee == null || callee.inputs().isEmpty())) {
                return given;
            }
            List<Tensor> inputs = new ArrayList<>(given.size());
            for (Tensor tensor : given.tensors()) {
                String renamed = renames.getOrDefault(tensor.name(), tensor.name());
                if (callee == null || callee.inputs().isEmpty() || takes(callee, renamed)) {
                    inputs.add(renamed.equals(tensor.name()) ? tensor : tensor.withName(renamed));
                }
            }
            return new Tensors(inputs);
        }

        private static boolean takes(ModelSignature signature, String name) {
            for (TensorSignature input : signature.inputs()) {
                if (input.name().equals(name)) {
                    return true;
                }
            }
            return false;
        }
    }
}
