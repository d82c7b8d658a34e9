package dev.serval.api;

import dev.serval.model.ModelFiles;
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

    /** The tiny models' files, committed by scripts/make_tiny_models.py. */
    /** The tiny cross-encoder Serval bundles as {@code tiny-reranker}. */
    private static final Path BUNDLED_RERANKER = Path.of("..", "platform-core", "src", "main", "resources", "serval",
            "models", "tiny-reranker");
    private static final Path API_MODELS = Path.of("src", "test", "resources", "models");

    /**
     * Installs, idempotently: {@code tiny-encoder/1} (a tiny FP32 text-embedding model whose batch rows are
     * independent, with the MiniLM tokenizer); {@code tiny-mlp/1} and {@code tiny-mlp/2} (a 2-layer MLP, tensor kind,
     * input FP32 [n, 4], output FP32 [n, 2]; version 2 is the same file under a new version); {@code tiny-dtypes/1}
     * (tensor kind, one input per datatype); {@code tiny-classifier/1} (text-classification, three labels); {@code tiny-reranker/1} (text-rerank, at most 8 documents).
     */
    static synchronized Path install() {
        tensorModel("tiny-mlp", "1");
        tensorModel("tiny-mlp", "2");
        tensorModel("tiny-dtypes", "1");
        installClassifier();
        installReranker();
        Path path = installEncoder();
        installMatryoshkaEncoder();
        return path;
    }

    /**
     * Installs copies of {@code tiny-encoder/1} under each of {@code names} (version 1): text-embedding models for
     * multiplexed deployments.
     */
    static synchronized void encoders(String... names) {
        Path encoder = installEncoder().resolve("tiny-encoder").resolve("1");
        for (String name : names) {
            Path dir = PATH.resolve(name).resolve("1");
            try {
                Files.createDirectories(dir);
                for (String file : new String[] {"model.onnx", "tokenizer.json", "model.yaml"}) {
                    Files.copy(encoder.resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static void tensorModel(String name, String version) {
        Path dir = PATH.resolve(name).resolve(version);
        try {
            Files.createDirectories(dir);
            Files.copy(API_MODELS.resolve(name).resolve("model.onnx"), dir.resolve("model.onnx"),
                    StandardCopyOption.REPLACE_EXISTING);
            Files.writeString(dir.resolve("model.yaml"), "kind: tensor\nfile: model.onnx\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void installClassifier() {
        Path dir = PATH.resolve("tiny-classifier").resolve("1");
        try {
            Files.createDirectories(dir);
            for (String file : new String[] {"model.onnx", "tokenizer.json"}) {
                Files.copy(API_MODELS.resolve("tiny-classifier").resolve(file), dir.resolve(file),
                        StandardCopyOption.REPLACE_EXISTING);
            }
            Files.writeString(dir.resolve("model.yaml"), """
                    kind: text-classification
                    max_length: 16
                    labels: [negative, neutral, positive]
                    """);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code tiny-reranker/1} bounded to 8 documents a request: the tiny cross-encoder (text-rerank) of
     * scripts/make_tiny_cross_encoder.py, which Serval also bundles with its default bound.
     */
    private static void installReranker() {
        Path dir = PATH.resolve("tiny-reranker").resolve("1");
        try {
            Files.createDirectories(dir);
            for (String file : new String[] {"model.onnx", "tokenizer.json", "config.json"}) {
                Files.copy(BUNDLED_RERANKER.resolve(file), dir.resolve(file),
                        StandardCopyOption.REPLACE_EXISTING);
            }
            Files.writeString(dir.resolve("model.yaml"), """
                    kind: text-rerank
                    max_length: 24
                    max_documents_per_request: 8
                    """);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code matryoshka-encoder/1}: {@code tiny-encoder}'s files, declaring that its 16-wide vectors may be cut to 8 or
     * 4 (not named {@code tiny-m...}: a test's glob {@code tiny-m*} means {@code tiny-mlp} alone).
     */
    private static void installMatryoshkaEncoder() {
        Path encoder = PATH.resolve("tiny-encoder").resolve("1");
        Path dir = PATH.resolve("matryoshka-encoder").resolve("1");
        try {
            Files.createDirectories(dir);
            for (String file : new String[] {"model.onnx", "tokenizer.json"}) {
                Files.copy(encoder.resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            }
            Files.writeString(dir.resolve("model.yaml"), """
                    kind: text-embedding
                    max_length: 256
                    matryoshka_dimensions: [8, 4]
                    """);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path installEncoder() {
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
