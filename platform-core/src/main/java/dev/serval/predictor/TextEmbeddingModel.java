package dev.serval.predictor;

import dev.serval.tensor.TensorIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A sentence-embedding model: a Hugging Face tokenizer, an ONNX encoder run by ONNX Runtime through DJL, and
 * the pooling sentence-transformers applies (masked mean over {@code last_hidden_state}, then L2
 * normalisation; {@link MeanPoolingHead}). How texts are batched, and why, and what happens to long texts, is common
 * to every text model: see {@link TextModel}. A long text split into windows gets the renormalised mean of the
 * window embeddings.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
public final class TextEmbeddingModel extends TextModel<Embedding> {

    private final ModelSignature signature;

    private TextEmbeddingModel(Parts<Embedding> parts) {
        super(parts);
        this.signature = new ModelSignature(
                "onnxruntime_onnx",
                List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                List.of(new TensorSignature(EmbeddingIO.OUTPUT, "FP32",
                        List.of(-1L, (long) parts.probeResult().vector().length))));
    }

    /**
     * Loads the encoder and tokenizer and runs the probe text once to learn the embedding dimension.
     *
     * @param modelFile      the ONNX file; its graph must output {@code last_hidden_state} [batch, seq, dim]
     * @param tokenizerFile  a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param maxLength      tokens kept per text, special tokens included (256 for all-MiniLM-L6-v2)
     * @param intraOpThreads ONNX Runtime intra-op threads per inference
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads)
            throws IOException {
        return load(modelFile, tokenizerFile, maxLength, intraOpThreads, true);
    }

    /**
     * {@link #load(Path, Path, int, int)}, deciding how to batch.
     *
     * @param batchInvariance whether a text's output must not depend on what it runs with (the default); when
     *                        false, texts are batched even if the model couples batch rows
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads,
            boolean batchInvariance) throws IOException {
        return load(modelFile, tokenizerFile, maxLength, intraOpThreads, batchInvariance, LongInputs.truncate());
    }

    /**
     * {@link #load(Path, Path, int, int, boolean)}, deciding what to do with texts over {@code maxLength} tokens.
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads,
            boolean batchInvariance, LongInputs longInputs) throws IOException {
        return new TextEmbeddingModel(TextModel.load(modelFile, tokenizerFile, maxLength, intraOpThreads,
                batchInvariance, longInputs, new MeanPoolingHead()));
    }

    /** The embedding dimension, learnt from the probe inference at load. */
    public int dimension() {
        return signature.outputs().getFirst().shape().get(1).intValue();
    }

    @Override
    public TensorIO<String, Embedding> io() {
        return EmbeddingIO.instance();
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }
}
