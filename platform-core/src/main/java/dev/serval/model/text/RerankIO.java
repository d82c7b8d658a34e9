package dev.serval.model.text;

import dev.serval.error.InvalidInput;
import dev.serval.model.Relevance;
import dev.serval.model.TextPair;
import dev.serval.request.TensorIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Cross-encoders ({@code text-rerank}) in OIP terms. Inputs: {@code query} (BYTES {@code [1]}, one query) and
 * {@code documents} (BYTES {@code [n]}, the documents to score against it, 1 &le; n &le; the model's
 * {@code max_documents_per_request}), in either order; each document makes one {@link TextPair} input, so the pairs of
 * one request are batched, like texts, with other requests' pairs. Outputs, in document order: {@code scores} (FP32
 * {@code [n]}, the sigmoid of each pair's logit: the relevance score), {@code logits} (FP32 {@code [n]}, the raw logit)
 * and {@code tokens} (INT32 {@code [n]}, the tokens the model read for each pair, special tokens included, after
 * truncation: what a rerank API's {@code usage} adds up). Thread-safe; one per model, since it holds its bound.
 */
public final class RerankIO implements TensorIO<TextPair, Relevance> {

    /** The query input: BYTES [1]. */
    public static final String QUERY = "query";
    /** The documents input: BYTES [n]. */
    public static final String DOCUMENTS = "documents";
    /** The relevance output: FP32 [n], the sigmoid of each logit. */
    public static final String SCORES = "scores";
    /** The raw scores output: FP32 [n], each pair's logit. */
    public static final String LOGITS = "logits";
    /** The token counts output: INT32 [n]. */
    public static final String TOKENS = "tokens";

    private final int maxDocuments;

    /** @param maxDocuments the most documents one request may hold ({@code max_documents_per_request}), at least 1 */
    public RerankIO(int maxDocuments) {
        if (maxDocuments < 1) {
            throw new IllegalArgumentException("maxDocuments must be >= 1, was " + maxDocuments);
        }
        this.maxDocuments = maxDocuments;
    }

    /**
     * {@inheritDoc} The document count is checked against the bound before any pair is made.
     *
     * @throws InvalidInput naming the tensor's field when the request is not one {@code query} and one
     *                      {@code documents} tensor of BYTES, the query not [1], the documents not [n] (or [n, 1]) or
     *                      empty, or more documents than {@code max_documents_per_request}
     */
    @Override
    public List<TextPair> inputs(Tensors request) {
        List<Tensor> tensors = request.tensors();
        int query = tensors.size() == 2 ? indexOf(tensors, QUERY) : -1;
        int documents = tensors.size() == 2 ? indexOf(tensors, DOCUMENTS) : -1;
        if (query < 0 || documents < 0) {
            throw new InvalidInput("inputs", "'inputs' must hold '" + QUERY + "' (BYTES [1]) and '" + DOCUMENTS
                    + "' (BYTES [n]); it has " + String.join(", ", tensors.stream().map(t -> "'" + t.name() + "'")
                    .toList()));
        }
        String[] queries = strings(tensors.get(query), query);
        if (queries.length != 1 || tensors.get(query).shape().length > 2) {
            throw new InvalidInput("inputs[" + query + "].shape", "input '" + QUERY + "' has shape "
                    + Arrays.toString(tensors.get(query).shape()) + "; this model takes one query, [1]");
        }
        Tensor documentTensor = tensors.get(documents);
        String[] texts = strings(documentTensor, documents);
        long[] shape = documentTensor.shape();
        if (!(shape.length == 1 || (shape.length == 2 && shape[1] == 1))) {
            throw new InvalidInput("inputs[" + documents + "].shape", "input '" + DOCUMENTS + "' has shape "
                    + Arrays.toString(shape) + "; this model takes [n] (or [n, 1])");
        }
        if (texts.length == 0) {
            throw new InvalidInput("inputs[" + documents + "].data", "input '" + DOCUMENTS
                    + "' is empty; send at least one document");
        }
        if (texts.length > maxDocuments) {
            throw new InvalidInput("inputs[" + documents + "].shape", "'" + DOCUMENTS + "' holds " + texts.length
                    + " documents; this model takes at most " + maxDocuments + " per request "
                    + "(max_documents_per_request)");
        }
        List<TextPair> pairs = new ArrayList<>(texts.length);
        for (String document : texts) {
            pairs.add(new TextPair(queries[0], document == null ? "" : document));
        }
        return pairs;
    }

    private static int indexOf(List<Tensor> tensors, String name) {
        for (int i = 0; i < tensors.size(); i++) {
            if (tensors.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static String[] strings(Tensor tensor, int index) {
        if (tensor.datatype() != DataType.BYTES) {
            throw new InvalidInput("inputs[" + index + "].datatype", "input '" + tensor.name() + "' has datatype "
                    + tensor.datatype() + "; this model takes BYTES");
        }
        return (String[]) tensor.data();
    }

    @Override
    public Tensors outputs(List<Relevance> relevances) {
        int n = relevances.size();
        float[] scores = new float[n];
        float[] logits = new float[n];
        int[] tokens = new int[n];
        for (int i = 0; i < n; i++) {
            Relevance relevance = relevances.get(i);
            scores[i] = relevance.score();
            logits[i] = relevance.logit();
            tokens[i] = relevance.tokens();
        }
        long[] shape = {n};
        return new Tensors(List.of(new Tensor(SCORES, DataType.FP32, shape, scores),
                new Tensor(LOGITS, DataType.FP32, shape.clone(), logits),
                new Tensor(TOKENS, DataType.INT32, shape.clone(), tokens)));
    }
}
