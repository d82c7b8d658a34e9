package dev.serval.repository;

import dev.serval.model.ModelFiles;
import java.util.Map;

/**
 * The models Serval ships, written into a repository unless they are there already: {@code all-minilm-l6-v2/1}
 * (quantised all-MiniLM-L6-v2, a text-embedding model, from the langchain4j artifact on the server's class path) and
 * {@code noop/1}. Stateless.
 */
public final class BundledModels {

    /** The bundled MiniLM's class-path resources (from the langchain4j artifact). */
    private static final String MODEL = "all-minilm-l6-v2-q.onnx";
    private static final String TOKENIZER = "all-minilm-l6-v2-q-tokenizer.json";

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
                        description: quantised all-MiniLM-L6-v2 (sentence-transformers), 384 dimensions, shipped with Serval
                        """,
                Map.of("model.onnx", (dir, name) -> ModelFiles.extract(classLoader, MODEL, dir, name),
                        "tokenizer.json", (dir, name) -> ModelFiles.extract(classLoader, TOKENIZER, dir, name)));
        repository.install("noop", "1", """
                kind: noop
                description: answers every request with its own input tensors (measures the platform's overhead)
                """, Map.of());
    }
}
