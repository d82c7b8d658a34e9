package dev.serval.model.text;

import dev.serval.model.Classification;
import dev.serval.request.TensorIO;
import dev.serval.request.TextIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * Text classification models in OIP terms: input {@code text} (BYTES {@code [n]}), outputs {@code scores} (FP32
 * {@code [n, labels]}, each row the scores of the model's labels in order: softmax probabilities, or each label's
 * sigmoid for a multi-label model), {@code label} (BYTES {@code [n]}, the name of each text's best label) and
 * {@code logits} (FP32 {@code [n, labels]}, the raw logits the scores were made of: TEI's {@code raw_scores}). Thread-safe; one per model, since it holds the model's label names.
 */
final class ClassificationIO implements TensorIO<String, Classification> {

    /** The name of the scores output. */
    public static final String SCORES = "scores";
    /** The name of the label output. */
    public static final String LABEL = "label";
    /** The name of the raw logits output. */
    public static final String LOGITS = "logits";

    private final List<String> labels;

    /** @param labels the model's label names, in logit order */
    public ClassificationIO(List<String> labels) {
        this.labels = List.copyOf(labels);
    }

    @Override
    public List<String> inputs(Tensors request) {
        return TextIO.texts(request);
    }

    @Override
    public Tensors outputs(List<Classification> classifications) {
        int rows = classifications.size();
        int width = labels.size();
        float[] scores = new float[Math.multiplyExact(rows, width)]; // fails loudly rather than wrap
        float[] logits = new float[scores.length];
        String[] names = new String[rows];
        for (int i = 0; i < rows; i++) {
            Classification classification = classifications.get(i);
            System.arraycopy(classification.scores(), 0, scores, i * width, width);
            System.arraycopy(classification.logits(), 0, logits, i * width, width);
            names[i] = labels.get(classification.labelIndex());
        }
        return new Tensors(List.of(
                new Tensor(SCORES, DataType.FP32, new long[] {rows, width}, scores),
                new Tensor(LABEL, DataType.BYTES, new long[] {rows}, names),
                new Tensor(LOGITS, DataType.FP32, new long[] {rows, width}, logits)));
    }
}
