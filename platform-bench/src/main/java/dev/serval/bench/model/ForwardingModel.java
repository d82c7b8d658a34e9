package dev.serval.bench.model;

import dev.serval.model.BatchObserver;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.request.TensorIO;

/**
 * A model that hands every call to another, for a benchmark that changes one or two of them (what batching it
 * declares, counting its opens and closes): every other answer, defaults included, stays the wrapped model's.
 */
abstract class ForwardingModel<I, O> implements Model<I, O> {

    final Model<I, O> model;

    ForwardingModel(Model<I, O> model) {
        this.model = model;
    }

    @Override
    public ModelSignature signature() {
        return model.signature();
    }

    @Override
    public TensorIO<I, O> io() {
        return model.io();
    }

    @Override
    public Predictor<I, O> newPredictor() {
        return model.newPredictor();
    }

    @Override
    public Predictor<I, O> newPredictor(BatchObserver observer) {
        return model.newPredictor(observer);
    }

    @Override
    public boolean widens() {
        return model.widens();
    }

    @Override
    public long inputSize(I input) {
        return model.inputSize(input);
    }

    @Override
    public BatchingDecision batching() {
        return model.batching();
    }

    @Override
    public boolean requestFailuresMarkUnhealthy() {
        return model.requestFailuresMarkUnhealthy();
    }

    @Override
    public boolean waitsOnOtherDeployments() {
        return model.waitsOnOtherDeployments();
    }

    @Override
    public I probeInput() {
        return model.probeInput();
    }

    @Override
    public void validate(I input, int index) {
        model.validate(input, index);
    }

    @Override
    public void close() {
        model.close();
    }
}
