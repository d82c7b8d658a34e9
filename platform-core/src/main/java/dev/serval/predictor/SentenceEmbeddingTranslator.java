package dev.serval.predictor;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslatorContext;

/**
 * Text to sentence embedding, one text per inference: tokenise (truncated, unpadded), run the encoder, then
 * masked mean pooling over {@code last_hidden_state} and L2 normalisation, as sentence-transformers does.
 * Pooling runs in Java on the predictor thread. Stateless apart from the shared, thread-safe tokenizer.
 */
final class SentenceEmbeddingTranslator implements NoBatchifyTranslator<String, Embedding> {

    private static final String MASK = "serval.attention_mask";

    private final HuggingFaceTokenizer tokenizer;

    SentenceEmbeddingTranslator(HuggingFaceTokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    @Override
    public NDList processInput(TranslatorContext ctx, String text) {
        Encoding encoding = tokenizer.encode(text);
        long[] mask = encoding.getAttentionMask();
        ctx.setAttachment(MASK, mask);
        NDManager manager = ctx.getNDManager();
        Shape shape = new Shape(1, mask.length);
        NDArray ids = manager.create(encoding.getIds(), shape);
        ids.setName("input_ids");
        NDArray attention = manager.create(mask, shape);
        attention.setName("attention_mask");
        NDArray types = manager.create(encoding.getTypeIds(), shape);
        types.setName("token_type_ids");
        return new NDList(ids, attention, types);
    }

    @Override
    public Embedding processOutput(TranslatorContext ctx, NDList output) {
        long[] mask = (long[]) ctx.getAttachment(MASK);
        NDArray hidden = output.get("last_hidden_state");
        if (hidden == null) {
            hidden = output.head();
        }
        Shape shape = hidden.getShape();
        if (shape.dimension() != 3 || shape.get(0) != 1 || shape.get(1) != mask.length) {
            throw new IllegalStateException("expected last_hidden_state [1, " + mask.length + ", dim], got " + shape);
        }
        int dimension = (int) shape.get(2);
        return new Embedding(meanPoolAndNormalise(hidden.toFloatArray(), mask, dimension), countTokens(mask));
    }

    /** Masked mean over the sequence axis of a [seq, dim] row-major matrix, then L2 normalisation. */
    static float[] meanPoolAndNormalise(float[] hidden, long[] mask, int dimension) {
        double[] sum = new double[dimension];
        int counted = 0;
        for (int position = 0; position < mask.length; position++) {
            if (mask[position] == 0) {
                continue;
            }
            counted++;
            int offset = position * dimension;
            for (int d = 0; d < dimension; d++) {
                sum[d] += hidden[offset + d];
            }
        }
        double divisor = Math.max(counted, 1e-9);
        double norm = 0;
        for (int d = 0; d < dimension; d++) {
            sum[d] /= divisor;
            norm += sum[d] * sum[d];
        }
        norm = Math.max(Math.sqrt(norm), 1e-12);
        float[] vector = new float[dimension];
        for (int d = 0; d < dimension; d++) {
            vector[d] = (float) (sum[d] / norm);
        }
        return vector;
    }

    private static int countTokens(long[] mask) {
        int tokens = 0;
        for (long m : mask) {
            tokens += (int) m;
        }
        return tokens;
    }
}
