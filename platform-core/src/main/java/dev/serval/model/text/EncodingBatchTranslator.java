package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.translate.NoBatchifyTranslator;
import ai.djl.translate.TranslatorContext;
import java.util.List;

/**
 * Already-tokenised texts to results in one inference: right-padded to the longest of them, {@code input_ids},
 * {@code attention_mask} marking the padding, and {@code token_type_ids} when the graph takes it; the
 * {@link TextHead} turns the outputs into one result per text. One text is a batch of one, without padding. Batches
 * of several texts are only for models whose rows are independent (see {@link TextModel}). Stateless.
 */
final class EncodingBatchTranslator<O> implements NoBatchifyTranslator<Encoding[], List<O>> {

    private static final String MASKS = "serval.attention_masks";

    private final TextHead<O> head;
    private final boolean tokenTypes;

    /**
     * @param tokenTypes whether the graph has a {@code token_type_ids} input (BERT does, DistilBERT does not)
     */
    EncodingBatchTranslator(TextHead<O> head, boolean tokenTypes) {
        this.head = head;
        this.tokenTypes = tokenTypes;
    }

    @Override
    public NDList processInput(TranslatorContext ctx, Encoding[] encodings) {
        int rows = encodings.length;
        int width = 0;
        for (Encoding encoding : encodings) {
            width = Math.max(width, encoding.getIds().length);
        }
        long[] ids = new long[rows * width];
        long[] mask = new long[rows * width];
        long[] types = tokenTypes ? new long[rows * width] : null;
        long[][] masks = new long[rows][];
        for (int r = 0; r < rows; r++) {
            long[] rowIds = encodings[r].getIds();
            System.arraycopy(rowIds, 0, ids, r * width, rowIds.length);
            if (tokenTypes) {
                System.arraycopy(encodings[r].getTypeIds(), 0, types, r * width, rowIds.length);
            }
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
        if (!tokenTypes) {
            return new NDList(idArray, maskArray);
        }
        NDArray typeArray = manager.create(types, shape);
        typeArray.setName("token_type_ids");
        return new NDList(idArray, maskArray, typeArray);
    }

    @Override
    public List<O> processOutput(TranslatorContext ctx, NDList output) {
        return head.rows(output, (long[][]) ctx.getAttachment(MASKS));
    }
}
