package dev.serval.predictor;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslatorContext;

/**
 * Already-tokenised texts to sentence embeddings in one inference: right-padded to the longest in the group, with
 * the attention mask marking the padding, then masked mean pooling and L2 normalisation per row. Only for models
 * whose rows are independent (see {@link TextEmbeddingModel}); stateless.
 */
final class BatchSentenceEmbeddingTranslator implements NoBatchifyTranslator<Encoding[], Embedding[]> {

    private static final String MASKS = "serval.attention_masks";

    @Override
    public NDList processInput(TranslatorContext ctx, Encoding[] encodings) {
        int rows = encodings.length;
        int width = 0;
        for (Encoding encoding : encodings) {
            width = Math.max(width, encoding.getIds().length);
        }
        long[] ids = new long[rows * width];
        long[] mask = new long[rows * width];
        long[] types = new long[rows * width];
        long[][] masks = new long[rows][];
        for (int r = 0; r < rows; r++) {
            long[] rowIds = encodings[r].getIds();
            System.arraycopy(rowIds, 0, ids, r * width, rowIds.length);
            System.arraycopy(encodings[r].getTypeIds(), 0, types, r * width, rowIds.length);
            long[] rowMask = new long[width];
            System.arraycopy(encodings[r].getAttentionMask(), 0, rowMask, 0, rowIds.length);
            System.arraycopy(rowMask, 0, mask, r * width, width);
            masks[r] = rowMask;
        }
        ctx.setAttachment(MASKS, masks);
        NDManager manager = ctx.getNDManager();
        Shape shape = new Shape(rows, width);
        NDArray idArray = manager.create(ids, shape);
        idArray.setName("input_ids");
        NDArray maskArray = manager.create(mask, shape);
        maskArray.setName("attention_mask");
        NDArray typeArray = manager.create(types, shape);
        typeArray.setName("token_type_ids");
        return new NDList(idArray, maskArray, typeArray);
    }

    @Override
    public Embedding[] processOutput(TranslatorContext ctx, NDList output) {
        long[][] masks = (long[][]) ctx.getAttachment(MASKS);
        NDArray hidden = output.get("last_hidden_state");
        if (hidden == null) {
            hidden = output.head();
        }
        Shape shape = hidden.getShape();
        int rows = masks.length;
        int width = masks[0].length;
        if (shape.dimension() != 3 || shape.get(0) != rows || shape.get(1) != width) {
            throw new IllegalStateException("expected last_hidden_state [" + rows + ", " + width + ", dim], got " + shape);
        }
        int dimension = (int) shape.get(2);
        float[] all = hidden.toFloatArray();
        Embedding[] embeddings = new Embedding[rows];
        int rowSize = width * dimension;
        for (int r = 0; r < rows; r++) {
            float[] row = new float[rowSize];
            System.arraycopy(all, r * rowSize, row, 0, rowSize);
            int tokens = 0;
            for (long m : masks[r]) {
                tokens += (int) m;
            }
            embeddings[r] = new Embedding(SentenceEmbeddingTranslator.meanPoolAndNormalise(row, masks[r], dimension), tokens);
        }
        return embeddings;
    }
}
