package dev.serval.model.text;

import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.QuantizationRanges;
import dev.serval.model.TensorSignature;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.request.TensorIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * A sentence-embedding model: a Hugging Face tokenizer, an ONNX encoder run by ONNX Runtime through DJL, and
 * the pooling sentence-transformers applies (masked mean over the token embeddings, the graph output
 * {@code last_hidden_state} unless the model names another, then L2 normalisation; {@link MeanPoolingHead}). How
 * texts are batched, and why, and what happens to long texts, is common to every text model: see {@link TextModel}.
 * A long text split into windows gets the renormalised mean of the window embeddings.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
final class TextEmbeddingModel extends TextModel<String, Embedding> {

    private final ModelSignature signature;
    private final List<Integer> matryoshka;
    private final Optional<QuantizationRanges> ranges;

    private TextEmbeddingModel(TextParts<Embedding> parts, List<Integer> matryoshka, QuantizationRanges ranges) {
        super(parts, TextInput.TEXT);
        this.matryoshka = List.copyOf(matryoshka);
        this.ranges = Optional.ofNullable(ranges);
        this.signature = new ModelSignature(
                "onnxruntime_onnx",
                List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                List.of(new TensorSignature(EmbeddingIO.OUTPUT, "FP32",
                        List.of(-1L, (long) parts.probeResult().vector().length))));
    }

    /**
     * Loads the encoder and tokenizer and runs the probe text once to learn the embedding dimension.
     *
     * @param modelFile     the ONNX file; its graph must have {@code output}
     * @param tokenizerFile a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param output        the graph output holding the token embeddings [batch, seq, dim] ({@code last_hidden_state}
     *                      for a standard export, {@code token_embeddings} for some sentence-transformers exports)
     * @param engine        ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for
     *                      none)
     * @param options       the maximum length (resolved: not 0; 256 for all-MiniLM-L6-v2), long-input policy, intra-op
     *                      threads and batch invariance; the chunk reduction is a classifier's and is ignored
     * @throws IOException when the graph has no such output (the message lists the ones it has), or as
     *                     {@link TextParts#load}
     */
    static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, String output, OnnxOptions engine,
            LoadOptions options) throws IOException {
        return load(modelFile, tokenizerFile, output, engine, options, List.of(), null);
    }

    /**
     * {@link #load(Path, Path, String, OnnxOptions, LoadOptions)}, declaring the widths its vectors may be cut to and
     * the ranges they are quantised by (null for none).
     *
     * @throws IllegalArgumentException when a width is not below the model's own, or the ranges are not of its width
     *                                  (the model is closed)
     */
    static TextEmbeddingModel load(Path modelFile, Path tokenizerFile, String output, OnnxOptions engine,
            LoadOptions options, List<Integer> matryoshka, QuantizationRanges ranges) throws IOException {
        TextEmbeddingModel model = new TextEmbeddingModel(TextParts.load(modelFile, tokenizerFile, engine, options,
                new MeanPoolingHead(TextHead.outputName(output))), matryoshka, ranges);
        if (ranges != null && ranges.width() != model.dimension()) {
            model.close();
            throw new IllegalArgumentException("field 'quantization_ranges': the file's rows hold " + ranges.width()
                    + " numbers; the model's vectors have " + model.dimension() + " dimensions");
        }
        for (int width : matryoshka) {
            if (width >= model.dimension()) {
                model.close();
                throw new IllegalArgumentException("matryoshka_dimensions " + matryoshka + ": " + width + " is not "
                        + "below the model's own width, " + model.dimension());
            }
        }
        return model;
    }

    @Override
    public List<Integer> matryoshkaDimensions() {
        return matryoshka;
    }

    @Override
    public Optional<QuantizationRanges> quantizationRanges() {
        return ranges;
    }

    /** The embedding dimension, learnt from the probe inference at load. */
    int dimension() {
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
