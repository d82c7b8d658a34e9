package dev.serval.model;

import dev.serval.request.TensorIO;
import dev.serval.request.WholeRequestIO;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * A model that answers every request with the request's own tensors, unchanged and under the same names, without
 * running anything: the Ray Serve style no-op that measures what the platform itself costs (HTTP, admission, queueing,
 * routing, the predictor hand-off). It holds no weights and no native state.
 *
 * <p>Its signature declares no tensors: it takes any tensors of any datatype and shape, and returns them.
 *
 * <p>Thread-safe; so are its predictors, although each still belongs to one predictor thread like any other.
 */
public final class NoopModel implements Model<Tensors, Tensors> {

    /** The OIP platform string reported in metadata. */
    public static final String PLATFORM = "serval_noop";

    private static final ModelSignature SIGNATURE = new ModelSignature(PLATFORM, List.of(), List.of());
    private static final Tensors PROBE = new Tensors(List.of(Tensor.of("input", new float[] {0f}, 1)));
    private static final BatchingDecision BATCHING = BatchingDecision.single("the no-op model returns each request as it came");

    /** Creates a no-op model; there is nothing to load. */
    public NoopModel() {
    }

    /** Platform {@value #PLATFORM}, no declared inputs or outputs: any tensors are accepted and echoed. */
    @Override
    public ModelSignature signature() {
        return SIGNATURE;
    }

    @Override
    public TensorIO<Tensors, Tensors> io() {
        return WholeRequestIO.instance();
    }

    /** A predictor whose {@code predict} returns the very {@link Tensors} instance it was given. */
    @Override
    public Predictor<Tensors, Tensors> newPredictor() {
        return new Predictor<>() {
            @Override
            public Tensors predict(Tensors input) {
                return input;
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public BatchingDecision batching() {
        return BATCHING;
    }

    /** One FP32 tensor {@code input} of shape {@code [1]}. */
    @Override
    public Tensors probeInput() {
        return PROBE;
    }

    /** Accepts any tensors: there is nothing they could fail to fit. */
    @Override
    public void validate(Tensors input, int index) {
    }

    @Override
    public void close() {
    }
}
