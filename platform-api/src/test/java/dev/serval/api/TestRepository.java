package dev.serval.api;

import dev.serval.predictor.ModelFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The model repository HTTP tests run against ({@code %test.serval.repository.path}): Serval installs its bundled
 * models there at startup; {@link #install()} adds the tiny test models, before a test profile starts Serval.
 */
final class TestRepository {

    static final Path PATH = Path.of("target", "test-repository");
    private static final Path CORE_MODELS = Path.of("..", "platform-core", "src", "test", "resources", "models");

    private TestRepository() {
    }

    /**
     * Installs {@code tiny-encoder/1} (a tiny FP32 text-embedding model whose batch rows are independent, with the
     * MiniLM tokenizer). Idempotent.
     */
    static synchronized Path install() {
        Path version = PATH.resolve("tiny-encoder").resolve("1");
        try {
            Files.createDirectories(version);
            Files.copy(CORE_MODELS.resolve("tiny-fp32-encoder").resolve("model.onnx"), version.resolve("model.onnx"),
                    StandardCopyOption.REPLACE_EXISTING);
            ModelFiles.extract(TestRepository.class.getClassLoader(), "all-minilm-l6-v2-q-tokenizer.json", version,
                    "tokenizer.json");
            Files.writeString(version.resolve("model.yaml"), """
                    kind: text-embedding
                    max_length: 256
                    description: tiny deterministic FP32 encoder for tests (scripts/make_tiny_encoder.py)
                    """);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return PATH;
    }
}
