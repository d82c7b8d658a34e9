package dev.serval.model.text;

import dev.serval.model.ChunkReduction;
import dev.serval.model.Classification;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.request.TensorIO;
import dev.serval.request.TextIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A text classifier: a Hugging Face tokenizer and an ONNX sequence classifier (output {@code logits} [batch, labels],
 * unless the model names another) run by ONNX Runtime through DJL; each text gets the softmax of its logits ({@link ClassifierHead}) and the name of its
 * best label. How texts are batched, and why, and what happens to long texts, is common to every text model: see
 * {@link TextModel}. A long text split into windows gets its windows' probabilities combined by the model's
 * {@link ChunkReduction}.
 *
 * <p>The model's {@code config.json}, when it has one ({@link ClassifierConfig}), names the labels ({@code id2label},
 * unless the descriptor names them) and says whether they exclude each other: {@code problem_type:
 * multi_label_classification} scores each label by the sigmoid of its logit instead of a softmax over all.
 *
 * <p>In OIP terms ({@link ClassificationIO}): input {@code text} BYTES {@code [n]}, outputs {@code scores} FP32
 * {@code [n, labels]}, {@code label} BYTES {@code [n]} and {@code logits} FP32 {@code [n, labels]}.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
final class TextClassificationModel extends TextModel<String, Classification> {

    private final List<String> labels;
    private final ModelSignature signature;
    private final ClassificationIO io;

    private TextClassificationModel(TextParts<Classification> parts, List<String> labels) {
        super(parts, TextInput.TEXT);
        this.labels = labels;
        this.io = new ClassificationIO(labels);
        this.signature = new ModelSignature(
                "onnxruntime_onnx",
                List.of(new TensorSignature(TextIO.INPUT, "BYTES", List.of(-1L))),
                List.of(new TensorSignature(ClassificationIO.SCORES, "FP32", List.of(-1L, (long) labels.size())),
                        new TensorSignature(ClassificationIO.LABEL, "BYTES", List.of(-1L)),
                        new TensorSignature(ClassificationIO.LOGITS, "FP32", List.of(-1L, (long) labels.size()))));
    }

    /**
     * Loads the classifier and tokenizer, runs the probe text, and checks that the model gives one logit per label.
     *
     * @param modelFile     the ONNX file; its graph takes {@code input_ids}, {@code attention_mask} and optionally
     *                      {@code token_type_ids}, and outputs {@code output} [batch, labels]
     * @param tokenizerFile a Hugging Face {@code tokenizer.json}; its own truncation and padding are replaced
     * @param labels        the label names in logit order (a model descriptor's labels); as many as the logits
     * @param output        the graph output holding the logits [batch, labels] ({@code logits} for a standard export)
     * @param engine        ONNX Runtime session options on top of Serval's defaults ({@link OnnxOptions#none()} for
     *                      none)
     * @param options       the maximum length (resolved: not 0), long-input policy, how the windows of a chunked text
     *                      combine (ignored when truncating), intra-op threads and batch invariance
     * @throws IllegalArgumentException when the labels are empty, blank, repeated or not as many as the logits, or a
     *                                  number is out of range
     * @throws IOException              when a file is missing or unreadable, the graph has no such output (the
     *                                  message lists the ones it has), or the model fails its probe
     */
    static TextClassificationModel load(Path modelFile, Path tokenizerFile, List<String> labels, String output,
            OnnxOptions engine, LoadOptions options) throws IOException {
        return load(modelFile, tokenizerFile, null, labels, output, engine, options);
    }

    /**
     * {@link #load(Path, Path, List, String, OnnxOptions, LoadOptions)} with the model's {@code config.json}.
     *
     * @param configFile the model's {@code config.json}; null or absent for none (descriptor labels, softmax)
     * @param labels     the descriptor's label names; empty to take {@code id2label}'s
     * @throws IOException also when the config is unreadable or its {@code id2label} has a gap
     */
    static TextClassificationModel load(Path modelFile, Path tokenizerFile, Path configFile, List<String> labels,
            String output, OnnxOptions engine, LoadOptions options) throws IOException {
        ClassifierConfig config = ClassifierConfig.read(configFile);
        List<String> names = List.copyOf(labels.isEmpty() ? config.labels() : labels);
        if (names.isEmpty()) {
            throw new IllegalArgumentException("a text classifier needs labels, one per logit; none were given"
                    + (configFile == null ? "" : " and " + configFile + " has no id2label"));
        }
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i).isBlank()) {
                throw new IllegalArgumentException("label " + i + " of " + names + " is blank");
            }
            if (names.indexOf(names.get(i)) != i) {
                throw new IllegalArgumentException("label '" + names.get(i) + "' appears twice in " + names);
            }
        }
        TextParts<Classification> parts = TextParts.load(modelFile, tokenizerFile, engine, options,
                new ClassifierHead(options.chunkReduction(), TextHead.outputName(output), config.multiLabel()));
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
    @Override
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
