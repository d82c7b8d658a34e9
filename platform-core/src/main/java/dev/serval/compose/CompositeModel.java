package dev.serval.compose;

import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.request.CallContext;
import dev.serval.request.Invocation;
import dev.serval.request.InvocationIO;
import dev.serval.request.TensorIO;
import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * What the composite kinds (pipeline, java) share as models: a whole request is one {@link Invocation}
 * ({@link InvocationIO}), answered on a predictor thread by {@link #answer}; they validate nothing before queueing (their
 * steps or their code judge the input); and their warm-up and health checks are answered by the predictor thread itself
 * ({@link #probeInput}), which shows the replica's threads are alive without calling other deployments or user code
 * that need not accept any particular input. A request they fail does not count against their replica's health nor
 * feed the failure monitor ({@link #requestFailuresMarkUnhealthy}): a client's input must not be able to restart them
 * or the node. Nor does a health probe left unanswered while they wait on calls to other deployments
 * ({@link #waitsOnOtherDeployments}): a slow or cold-starting step is not a hung replica.
 */
abstract sealed class CompositeModel implements Model<Invocation, Tensors> permits PipelineModel, JavaHandlerModel {

    private static final Invocation PROBE = new Invocation(new Tensors(List.of()), CallContext.NONE);

    private final ModelSignature signature;
    private final OutstandingCalls outstanding;

    CompositeModel(ModelSignature signature, OutstandingCalls outstanding) {
        this.signature = signature;
        this.outstanding = outstanding;
    }

    /** Answers one request, on a predictor thread; null when the request ended meanwhile (its answer is discarded). */
    abstract Tensors answer(Invocation invocation) throws Exception;

    @Override
    public final ModelSignature signature() {
        return signature;
    }

    @Override
    public final TensorIO<Invocation, Tensors> io() {
        return InvocationIO.instance();
    }

    @Override
    public final Predictor<Invocation, Tensors> newPredictor() {
        return new Predictor<>() {
            @Override
            public Tensors predict(Invocation input) throws Exception {
                return input == PROBE ? PROBE.tensors() : answer(input);
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public final Invocation probeInput() {
        return PROBE;
    }

    @Override
    public final void validate(Invocation input, int index) {
        // judged by the steps or the handler that take it
    }

    /** While a call of this model to another deployment is under way, its predictor threads may be waiting on it. */
    @Override
    public final boolean waitsOnOtherDeployments() {
        return outstanding.any();
    }

    /** A failed request is a step's or the handler's failure on its input: health checks alone judge the replicas. */
    @Override
    public final boolean requestFailuresMarkUnhealthy() {
        return false;
    }
}
