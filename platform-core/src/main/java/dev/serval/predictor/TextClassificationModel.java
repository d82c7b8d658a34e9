package dev.serval.predictor;

import dev.serval.tensor.TensorIO;
import dev.serval.tensor.TextIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A text classifier: a Hugging Face tokenizer and an ONNX sequence classifier (output {@value #DEFAULT_OUTPUT}
 * [batch, labels], unless the model names another)
 * run by ONNX Runtime through DJL; each text gets the softmax of its logits ({@link SoftmaxHead}) and the name of its
 * best label. How texts are batched, and why, and what happens to long texts, is common to every text model: see
 * {@link TextModel}. A long text split into windows gets its windows' probabilities combined by the model's
 * {@link ChunkReduction}.
 *
 * <p>In OIP terms ({@link ClassificationIO}): input {@code text} BYTES {@code [n]}, outputs {@code scores} FP32
 * {@code [n, labels]} and {@code label} BYTES {@code [n]}.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
public final class TextClassificationModel extends TextModel<Classification> {

    /** The graph output holding the logits [batch, labels] unless a model names another. */
    public static final String DEFAULT_OUTPUT = "logits";

    private final List<String> labels;
    private final ModelSignature signature;
    private final ClassificationIO io;

    private TextClassificationModel(Parts<Classification> parts, List<String> labels) {
        super(parts);
        this.labels = labels;
        this.io = new ClassificationIO(labels);
        this.signature = new ModelSignature(
                "onnxruntime_onnx",
                List.of(new TensorSignature(TextIO.INPUT, "BYTES", List.of(-1L))),
                List.of(new TensorSignature(ClassificationIO.SCORES, "FP32", List.of(-1L, (long) labels.size())),
                        new TensorSignature(ClassificationIO.LABEL, "BYTES", List.of(-1L))));
    }

    /**
     * Loads the classifier, truncating long texts, with batch invariance.
     *
     * @see #load(Path, Path, List, int, int, boolean, LongInputs, ChunkReduction)
     */
    public static TextClassificationModel load(Path modelFile, Path tokenizerFile, List<String> labels, int maxLength,
            int intraOpThreads) throws IOException {
        return load(modelFile, tokenizerFile, labels, maxLength, intraOpThreads, true, LongInputs.truncate(),
                ChunkReduction.MEAN);
    }

    /**
     * Loads the classifier and tokenizer, runs the probe text, and checks that the model gives one logit per label.
     *
     * @param modelFile       the ONNX file; its graph takes {@code input_ids}, {@code attention_mask} and optionally
     *                        {@code token_type_ids}, and outputs {@value #DEFAULT_OUTPUT} [batch, labels]
     * @param tokenizerFile   a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param labels          the label names in logit order (a model descriptor's labels); as many as the logits
     * @param maxLength       tokens kept per text (per window when chunking), special tokens included
     * @param intraOpThreads  ONNX Runtime intra-op threads per inference
     * @param batchInvariance whether a text's scores must not depend on what it runs with (the default); when false,
     *                        texts are batched even if the model couples batch rows
     * @param longInputs      what to do with texts over {@code maxLength} tokens
     * @param reduction       how the windows of a chunked text combine; ignored when truncating
     * @throws IllegalArgumentException when the labels are empty, blank, repeated or not as many as the logits, or a
     *                                  number is out of range
     * @throws IOException              when a file is missing or unreadable, or the model fails its probe
     */
    public static TextClassificationModel load(Path modelFile, Path tokenizerFile, List<String> labels, int maxLength,
            int intraOpThreads, boolean batchInvariance, LongInputs longInputs, ChunkReduction reduction)
            throws IOException {
        return load(modelFile, tokenizerFile, labels, maxLength, intraOpThreads, batchInvariance, longInputs,
                reduction, OnnxOptions.none(), DEFAULT_OUTPUT);
    }

    /**
     * {@link #load(Path, Path, List, int, int, boolean, LongInputs, ChunkReduction)} with ONNX Runtime session options
     * and the graph output to read.
     *
     * @param engine ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for none)
     * @param output the graph output holding the logits [batch, labels] ({@value #DEFAULT_OUTPUT} for a standard
     *               export)
     * @throws IOException when the graph has no such output (the message lists the ones it has), or as above
     */
    public static TextClassificationModel load(Path modelFile, Path tokenizerFile, List<String> labels, int maxLength,
            int intraOpThreads, boolean batchInvariance, LongInputs longInputs, ChunkReduction reduction,
            OnnxOptions engine, String output) throws IOException {
        List<String> names = List.copyOf(labels);
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a text classifier needs labels, one per logit; none were given");
        }
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i).isBlank()) {
                throw new IllegalArgumentException("label " + i + " of " + names + " is blank");
            }
            if (names.indexOf(names.get(i)) != i) {
                throw new IllegalArgumentException("label '" + names.get(i) + "' appears twice in " + names);
            }
        }
        Parts<Classification> parts = TextModel.load(modelFile, tokenizerFile, maxLength, intraOpThreads,
                batchInvariance, longInputs, engine,
                new SoftmaxHead(Objects.requireNonNull(reduction, "reduction"), TextModel.outputName(output)));
        TextClassificationModel model = new TextClassificationModel(parts, names);
        int logits = parts.probeResult().scores().length;
        if (logits != names.size()) {
            model.close();
            throw new IllegalArgumentException("model " + modelFile + " gives " + logits + " logits per text but "
                    + names.size() + " labels were given " + names + "; the labels must name every logit, in order");
        }
        return model;
    }

    /** The label names, in logit order. */
    public List<String> labels() {
        return labels;
    }

    @Override
    public TensorIO<String, Classification> io() {
        return io;
    }

    @Override
    public ModelSignature signature() {
        return signature;
    }
}
