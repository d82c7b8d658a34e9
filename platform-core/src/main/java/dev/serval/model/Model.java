package dev.serval.model;

import dev.serval.error.InvalidInput;
import dev.serval.request.TensorIO;
import java.util.List;
import java.util.Optional;

/**
 * A loaded model: weights loaded once and shared by every predictor made from it. Thread-safe: any thread
 * may call {@link #newPredictor()} and {@link #validate}; each predictor then belongs to one thread.
 *
 * @param <I> the input type
 * @param <O> the output type
 */
public interface Model<I, O> extends AutoCloseable {

    /** What the model takes and returns, for metadata endpoints. */
    ModelSignature signature();

    /**
     * The names of the model's labels, in the order of its score outputs (a classifier's); empty for a model without
     * labels.
     */
    default List<String> labels() {
        return List.of();
    }

    /**
     * The widths a text-embedding model's vectors may be cut to (its descriptor's {@code matryoshka_dimensions});
     * empty for a model that declares none.
     */
    default List<Integer> matryoshkaDimensions() {
        return List.of();
    }

    /**
     * The calibrated ranges a text-embedding model's vectors are quantised by ({@code encoding_format} int8 and uint8;
     * its descriptor's {@code quantization_ranges}), of its full width; empty for a model that declares none.
     */
    default Optional<QuantizationRanges> quantizationRanges() {
        return Optional.empty();
    }

    /** The model's tokenizer (a text model's); empty for a model that reads no text. */
    default Optional<TextTokenizer> tokenizer() {
        return Optional.empty();
    }

    /** How Open Inference Protocol tensors map to this model's inputs, and its outputs back. */
    TensorIO<I, O> io();

    /** A new predictor sharing this model's weights, for the calling thread to own. */
    Predictor<I, O> newPredictor();

    /** A new predictor that reports its batched inferences to {@code observer}. */
    default Predictor<I, O> newPredictor(BatchObserver observer) {
        return newPredictor();
    }

    /**
     * Whether this model's predictors can run an inference on more ONNX Runtime threads when told to
     * ({@link Predictor#widen}): it loaded a second, wider session. By default false, and the predictor pool never
     * asks.
     */
    default boolean widens() {
        return false;
    }

    /**
     * A cheap measure of how much work {@code input} is, comparable between inputs of this model (a text's length in
     * characters, a tensor request's element count): whether a lone inference is worth the replica's idle cores
     * ({@link Predictor#widen}) depends on how much there is to split, so the predictor pool measures that per size
     * class, and batches' costs per unit of it measure which batch size is cheapest (so that a batch of long inputs
     * does not look dear). Called only for models that {@link #widens()} or batch, on a predictor thread, for an input
     * {@link #validate} accepted. By default 1: every input alike.
     */
    default long inputSize(I input) {
        return 1;
    }

    /**
     * The most tokens one input can make this model read ({@link InputTokens#count}), whatever its length: a text
     * model's {@code max_length} when it truncates, its windows' total when it chunks. 0 for a model that reads no
     * tokens: token budgets ({@code max_batch_tokens}, {@code max_tokens_per_request}) do not apply to it, and its
     * predictors are never asked to count ({@link Predictor#tokens}).
     */
    default long maxInputTokens() {
        return 0;
    }

    /**
     * The tokens admission counts {@code inputs} at ({@code max_pending_tokens}) from when their request is admitted
     * until it is answered: {@link TokenEstimate#of} at {@link #maxInputTokens}, estimated from the texts' code points
     * without tokenising them, so 0 for a model that reads no tokens (tensor models, pipelines, handlers). Called on
     * request threads (the event loop) for inputs not yet validated: cheap, allocation-free, never blocking.
     */
    default long admissionCost(List<I> inputs) {
        return TokenEstimate.of(inputs, maxInputTokens());
    }

    /** Whether inputs may share an inference, decided when the model loaded. By default: each input alone. */
    default BatchingDecision batching() {
        return BatchingDecision.single("the model runs one input per inference");
    }

    /**
     * Whether a request that fails in this model counts against its replica's health ({@code
     * health_check_failure_threshold} failures in a row replace the replica). True for models: one that fails on input
     * it accepted is broken. The composite kinds answer false: their failures are their steps' or their user code's
     * on that request's input, so a client sending such input must not be able to make replicas or the node restart:
     * their request failures feed neither the replica's health nor the failure monitor, and their replicas are
     * replaced by failed health checks only.
     */
    default boolean requestFailuresMarkUnhealthy() {
        return true;
    }

    /**
     * Whether a request of this model is waiting, now, on a call to another deployment (the composite kinds): health
     * checks then do not count a probe queued behind such requests as a hang, since each call ends at its caller's
     * deadline at the latest and the callee has health checks of its own. False for models. Read by the health-check
     * thread once per period.
     */
    default boolean waitsOnOtherDeployments() {
        return false;
    }

    /** An input the model is known to accept, run once per predictor before it serves (warm-up and probe). */
    I probeInput();

    /**
     * Checks one input before it is queued, so that input the model can never take is refused at once
     * instead of occupying a predictor.
     *
     * @param index the input's position in its request, for the message
     * @throws InvalidInput naming the input and the problem
     */
    void validate(I input, int index);

    /** Releases the weights. Called once, after every predictor made from this model is closed. */
    @Override
    void close();
}
