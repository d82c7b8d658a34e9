package dev.serval.repository;

import dev.serval.model.ModelFiles;
import java.util.Map;

/**
 * The models Serval ships, written into a repository unless they are there already: {@code all-minilm-l6-v2/1}
 * (quantised all-MiniLM-L6-v2, a text-embedding model, from the langchain4j artifact on the server's class path),
 * {@code noop/1}, and {@code tiny-reranker/1}: a cross-encoder of a few kilobytes with random weights
 * (scripts/make_tiny_cross_encoder.py), so that the rerank APIs can be tried, and are tested, without a download.
 * Stateless.
 */
public final class BundledModels {

    /** The bundled MiniLM's class-path resources (from the langchain4j artifact). */
    private static final String MODEL = "all-minilm-l6-v2-q.onnx";
    private static final String TOKENIZER = "all-minilm-l6-v2-q-tokenizer.json";
    /**
     * The MiniLM's int8/uint8 ranges (this module's resources): per-dimension minimum and maximum of its vectors over
     * scripts/data/int8-calibration.txt, written by scripts/make_int8_ranges.py.
     */
    private static final String MINILM_RANGES = "serval/models/all-minilm-l6-v2/quantization-ranges.json";
    /** The tiny reranker's class-path folder (this module's resources). */
    private static final String RERANKER = "serval/models/tiny-reranker/";

    private BundledModels() {
    }

    /**
     * Installs the bundled models into {@code repository} ({@link ModelRepository#install}: a version already there
     * keeps its descriptor; a model file of the right size is kept).
     *
     * @param classLoader where the MiniLM's resources are
     * @throws IllegalArgumentException when they are not on its class path
     */
    public static void install(ModelRepository repository, ClassLoader classLoader) {
        repository.install("all-minilm-l6-v2", "1", """
                        kind: text-embedding
                        file: model.onnx
                        tokenizer: tokenizer.json
                        max_length: 256
                        quantization_ranges: quantization-ranges.json
                        description: quantised all-MiniLM-L6-v2 (sentence-transformers), 384 dimensions, shipped with Serval
                        """,
                Map.of("model.onnx", (dir, name) -> ModelFiles.extract(classLoader, MODEL, dir, name),
                        "tokenizer.json", (dir, name) -> ModelFiles.extract(classLoader, TOKENIZER, dir, name),
                        "quantization-ranges.json", (dir, name) -> ModelFiles.extract(classLoader, MINILM_RANGES, dir,
                                name)));
        repository.install("noop", "1", """
                kind: noop
                description: answers every request with its own input tensors (measures the platform's overhead)
                """, Map.of());
        repository.install("tiny-reranker", "1", """
                        kind: text-rerank
                        max_length: 24
                        description: a tiny cross-encoder with random weights, for trying the rerank APIs (its scores mean nothing)
                        """,
                Map.of("model.onnx", (dir, name) -> ModelFiles.extract(classLoader, RERANKER + "model.onnx", dir, name),
                        "tokenizer.json", (dir, name) -> ModelFiles.extract(classLoader, RERANKER + "tokenizer.json",
                                dir, name),
                        "config.json", (dir, name) -> ModelFiles.extract(classLoader, RERANKER + "config.json", dir,
                                name)));
    }
}
