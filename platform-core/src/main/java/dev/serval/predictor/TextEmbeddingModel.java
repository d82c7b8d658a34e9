package dev.serval.predictor;

import dev.serval.tensor.TensorIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A sentence-embedding model: a Hugging Face tokenizer, an ONNX encoder run by ONNX Runtime through DJL, and
 * the pooling sentence-transformers applies (masked mean over the token embeddings, the graph output
 * {@value #DEFAULT_OUTPUT} unless the model names another, then L2 normalisation; {@link MeanPoolingHead}). How texts are batched, and why, and what happens to long texts, is common
 * to every text model: see {@link TextModel}. A long text split into windows gets the renormalised mean of the
 * window embeddings.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
public final class TextEmbeddingModel extends TextModel<Embedding> {

    /** The graph output holding the token embeddings [batch, seq, dim] unless a model names another. */
    public static final String DEFAULT_OUTPUT = "last_hidden_state";

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
     * @param modelFile      the ONNX file; its graph must output {@value #DEFAULT_OUTPUT} [batch, seq, dim]
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
        return load(modelFile, tokenizerFile, maxLength, intraOpThreads, batchInvariance, longInputs,
                OnnxOptions.none(), DEFAULT_OUTPUT);
    }

    /**
     * {@link #load(Path, Path, int, int, boolean, LongInputs)} with ONNX Runtime session options and the graph output
     * to pool.
     *
     * @param engine ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for none)
     * @param output the graph output holding the token embeddings [batch, seq, dim] ({@value #DEFAULT_OUTPUT} for a
     *               standard export, {@code token_embeddings} for some sentence-transformers exports)
     * @throws IOException when the graph has no such output (the message lists the ones it has), or as above
     */
    public static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, int maxLength, int intraOpThreads,
            boolean batchInvariance, LongInputs longInputs, OnnxOptions engine, String output) throws IOException {
        return new TextEmbeddingModel(TextModel.load(modelFile, tokenizerFile, maxLength, intraOpThreads,
                batchInvariance, longInputs, engine, new MeanPoolingHead(TextModel.outputName(output))));
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
