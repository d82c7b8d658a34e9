package dev.serval.model.text;

import dev.serval.model.Embedding;
import dev.serval.request.TensorIO;
import dev.serval.request.TextIO;
import dev.serval.tensor.DataType;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.util.List;

/**
 * Text embedding models in OIP terms: input {@code text} (BYTES {@code [n]}), output {@code embedding} (FP32
 * {@code [n, dim]}). Public so that model sources outside this package whose models answer with {@link Embedding}s
 * map them the same way (the API's test fakes); stateless, one shared instance.
 */
public final class EmbeddingIO implements TensorIO<String, Embedding> {

    /** The name of the output tensor. */
    public static final String OUTPUT = "embedding";

    private static final EmbeddingIO INSTANCE = new EmbeddingIO();

    private EmbeddingIO() {
    }

    public static EmbeddingIO instance() {
        return INSTANCE;
    }

    @Override
    public List<String> inputs(Tensors request) {
        return TextIO.texts(request);
    }

    @Override
    public Tensors outputs(List<Embedding> embeddings) {
        int rows = embeddings.size();
        int dimension = embeddings.getFirst().vector().length;
        float[] data = new float[Math.multiplyExact(rows, dimension)]; // fails loudly rather than wrap
        for (int i = 0; i < rows; i++) {
            System.arraycopy(embeddings.get(i).vector(), 0, data, i * dimension, dimension);
        }
        return new Tensors(List.of(new Tensor(OUTPUT, DataType.FP32, new long[] {rows, dimension}, data)));
    }
}
