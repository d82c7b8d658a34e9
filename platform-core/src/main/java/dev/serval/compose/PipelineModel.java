package dev.serval.compose;

import dev.serval.controller.DeploymentState;
import dev.serval.deployment.Deployment;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.TensorIO;
import dev.serval.tensor.Tensors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * {@code kind: pipeline}: a request runs through deployments in turn, each step through its {@link Handle} (the
 * step's router and admission, the request's deadline and id, cancellation when the request ends). The first step
 * gets the request's tensors; each later step gets the previous step's outputs, renamed by its {@code inputs}
 * mapping and narrowed to the inputs the step's model declares (all of them when it declares none); the last step's
 * outputs are the answer.
 *
 * <p>Checked when it loads ({@link #load}): every step is a deployment other than the pipeline, steps still starting
 * are waited for (within a bound), none has failed, and, as far as the steps' metadata tells, every input of a step is
 * an output of the step before it (after renaming) with the same datatype, and every renamed output exists. Its
 * metadata shows the first step's inputs and the last step's outputs.
 *
 * <p>Threads: a predictor thread runs one request at a time, waiting for each step's answer (a pipeline replica runs
 * as many requests at once as it has predictor threads; its own work is renaming). Steps are looked up on every call.
 */
public final class PipelineModel implements Model<Invocation, Tensors> {

    /** The OIP platform string reported in metadata. */
    public static final String PLATFORM = "serval_pipeline";

    /** Warm-up and health checks: answered by the predictor thread itself, without calling the steps. */
    private static final Invocation PROBE = new Invocation(new Tensors(List.of()), CallContext.NONE);

    private final List<Stage> stages;
    private final ModelSignature signature;

    private PipelineModel(List<Stage> stages, ModelSignature signature) {
        this.stages = stages;
        this.signature = signature;
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
        List<ModelSignature> signatures = new ArrayList<>();
        for (int i = 0; i < pipeline.steps().size(); i++) {
            PipelineStep step = pipeline.steps().get(i);
            String where = "pipeline '" + name + "' step " + (i + 1) + " ('" + step.deployment() + "')";
            if (step.deployment().equals(name)) {
                throw new IllegalArgumentException(where + " calls the pipeline itself");
            }
            Deployment<?, ?> target = find(composition.callees(), step.deployment(), readyWait);
            if (target == null) {
                throw new IllegalArgumentException(where + ": no deployment is called '" + step.deployment()
                        + "'; deploy it before the pipeline");
            }
            signatures.add(awaitSignature(target, where, readyWait));
            stages.add(new Stage(new Handle(name, step.deployment(), composition.callees()), step.inputs()));
        }
        for (int i = 1; i < stages.size(); i++) {
            checkLink(name, pipeline.steps().get(i - 1), signatures.get(i - 1), pipeline.steps().get(i),
                    signatures.get(i), i + 1);
        }
        ModelSignature first = signatures.getFirst();
        ModelSignature last = signatures.getLast();
        return new PipelineModel(List.copyOf(stages), new ModelSignature(PLATFORM,
                first == null ? List.of() : first.inputs(), last == null ? List.of() : last.outputs()));
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

    /** How long a load waits for a step's deployment to appear. */
    private static final Duration APPEAR_WAIT = Duration.ofSeconds(5);

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

    /** Checks that step {@code number}'s inputs are among the previous step's renamed outputs, as far as both say. */
    private static void checkLink(String name, PipelineStep previous, ModelSignature from, PipelineStep step,
            ModelSignature to, int number) {
        String where = "pipeline '" + name + "' step " + number + " ('" + step.deployment() + "')";
        if (from == null || from.outputs().isEmpty()) {
            return; // the previous step does not say what it returns (no-op, a handler that declares nothing)
        }
        Set<String> outputs = from.outputs().stream().map(TensorSignature::name).collect(Collectors.toSet());
        for (String renamed : step.inputs().keySet()) {
            if (!outputs.contains(renamed)) {
                throw new IllegalArgumentException(where + " maps '" + renamed + "', which step " + (number - 1)
                        + " ('" + previous.deployment() + "') does not return; it returns " + names(from.outputs()));
            }
        }
        if (to == null || to.inputs().isEmpty()) {
            return;
        }
        Map<String, TensorSignature> available = new java.util.HashMap<>();
        for (TensorSignature output : from.outputs()) {
            available.put(step.inputs().getOrDefault(output.name(), output.name()), output);
        }
        for (TensorSignature input : to.inputs()) {
            TensorSignature given = available.get(input.name());
            if (given == null) {
                throw new IllegalArgumentException(where + " takes '" + input.name() + "', which step " + (number - 1)
                        + " ('" + previous.deployment() + "') does not return (it returns " + names(from.outputs())
                        + "); map one of them with inputs: {from: " + input.name() + "}");
            }
            if (!given.datatype().equals(input.datatype())) {
                throw new IllegalArgumentException(where + " takes '" + input.name() + "' as " + input.datatype()
                        + "; step " + (number - 1) + " ('" + previous.deployment() + "') returns '" + given.name()
                        + "' as " + given.datatype());
            }
        }
    }

    private static String names(List<TensorSignature> tensors) {
        return tensors.stream().map(t -> "'" + t.name() + "'").collect(Collectors.joining(", "));
    }

    /** The steps' callees, in order (status views). */
    public List<String> steps() {
        return stages.stream().map(stage -> stage.handle().callee()).toList();
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }

    @Override
    public TensorIO<Invocation, Tensors> io() {
        return InvocationIO.instance();
    }

    @Override
    public Predictor<Invocation, Tensors> newPredictor() {
        return new Predictor<>() {
            @Override
            public Tensors predict(Invocation input) throws Exception {
                return run(input);
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public Invocation probeInput() {
        return PROBE;
    }

    @Override
    public void validate(Invocation input, int index) {
        // each step validates what it is given
    }

    @Override
    public void close() {
    }

    /** Runs the steps in turn; null when the request ended meanwhile (its answer is discarded). */
    private Tensors run(Invocation invocation) throws Exception {
        if (invocation == PROBE) {
            return PROBE.tensors();
        }
        Tensors current = invocation.tensors();
        for (int i = 0; i < stages.size(); i++) {
            if (invocation.isEnded()) {
                return null;
            }
            Stage stage = stages.get(i);
            CompletableFuture<dev.serval.deployment.Inference> call = stage.handle().infer(invocation,
                    i == 0 ? current : stage.inputs(current));
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
     * One step: its handle, and how the previous step's outputs become its inputs.
     *
     * @param renames previous output name to this step's input name
     */
    private record Stage(Handle handle, Map<String, String> renames) {

        /** The previous step's outputs, renamed, and narrowed to the inputs the step's model declares now. */
        Tensors inputs(Tensors previous) {
            ModelSignature callee = handle.signature();
            if (renames.isEmpty() && (callee == null || callee.inputs().isEmpty())) {
                return previous;
            }
            List<Tensor> inputs = new ArrayList<>(previous.size());
            for (Tensor output : previous.tensors()) {
                String name = renames.getOrDefault(output.name(), output.name());
                if (callee == null || callee.inputs().isEmpty() || takes(callee, name)) {
                    inputs.add(name.equals(output.name()) ? output : output.withName(name));
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
