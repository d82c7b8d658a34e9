package dev.serval.model.text;

import dev.serval.model.LoadOptions;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.Relevance;
import dev.serval.model.TensorSignature;
import dev.serval.model.TextPair;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.request.TensorIO;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * A cross-encoder (reranker): a Hugging Face sequence-classification export of one label ({@code model.onnx} taking
 * {@code input_ids}, {@code attention_mask} and, if it has it, {@code token_type_ids}; output {@code logits}
 * [batch, 1]) and its {@code tokenizer.json}. Each input is a (query, document) {@link TextPair}, tokenised as a
 * sequence pair ({@code [CLS] query [SEP] document [SEP]}, type ids 0 then 1) and truncated at the maximum length
 * longest first, as transformers' {@code tokenizer(query, document, truncation=True)} and sentence-transformers'
 * {@code CrossEncoder} do; its result ({@link RelevanceHead}) is the logit, its sigmoid (the relevance score
 * {@code CrossEncoder.predict} returns for a one-label model) and the pair's token count. Pairs are batched like the
 * texts of the other text kinds, pairs of several requests in one inference, grouped by token length, and a pair's
 * score does not depend on its batch ({@link TextModel}). Long pairs are truncated: a reranker does not chunk.
 *
 * <p>In OIP terms ({@link RerankIO}): inputs {@code query} BYTES {@code [1]} and {@code documents} BYTES {@code [n]}
 * (n at most {@code max_documents_per_request}); outputs {@code scores} FP32 {@code [n]}, {@code logits} FP32
 * {@code [n]} and {@code tokens} INT32 {@code [n]}.
 *
 * <p>Thread-safe. Predictors from {@link #newPredictor()} are not (see {@link Predictor}).
 */
final class TextRerankModel extends TextModel<TextPair, Relevance> {

    private static final ModelSignature SIGNATURE = new ModelSignature("onnxruntime_onnx",
            List.of(new TensorSignature(RerankIO.QUERY, "BYTES", List.of(1L)),
                    new TensorSignature(RerankIO.DOCUMENTS, "BYTES", List.of(-1L))),
            List.of(new TensorSignature(RerankIO.SCORES, "FP32", List.of(-1L)),
                    new TensorSignature(RerankIO.LOGITS, "FP32", List.of(-1L)),
                    new TensorSignature(RerankIO.TOKENS, "INT32", List.of(-1L))));

    private final RerankIO io;

    private TextRerankModel(TextParts<Relevance> parts, int maxDocuments) {
        super(parts, TextInput.PAIR);
        this.io = new RerankIO(maxDocuments);
    }

    /**
     * Loads the cross-encoder and its tokenizer and runs the probe, which fails unless the model gives one logit per
     * input.
     *
     * @param output       the graph output holding the logits [batch, 1] ({@code logits} for a standard export)
     * @param options      the maximum length of a pair (resolved: not 0), special tokens included; intra-op threads
     *                     and batch invariance. Long inputs are truncated: chunking is refused
     * @param maxDocuments the most documents one request may hold ({@code max_documents_per_request})
     * @throws IllegalArgumentException when the options ask for chunking, or a number is out of range
     * @throws IOException              as {@link TextParts#load}, and when the model gives more than one logit per pair
     */
    static TextRerankModel load(Path modelFile, Path tokenizerFile, String output, OnnxOptions engine,
            LoadOptions options, int maxDocuments) throws IOException {
        if (options.longInputs().chunk()) {
            throw new IllegalArgumentException("a text-rerank model truncates each pair at max_length; long_inputs: "
                    + "chunk is for single texts");
        }
        new RerankIO(maxDocuments); // refuses a bound below 1 before anything loads
        return new TextRerankModel(TextParts.load(modelFile, tokenizerFile, engine, options,
                new RelevanceHead(TextHead.outputName(output))), maxDocuments);
    }

    @Override
    public TensorIO<TextPair, Relevance> io() {
        return io;
    }

    @Override
    public ModelSignature signature() {
        return SIGNATURE;
    }
}
