package dev.serval.api.serving;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.api.config.ConfigParser;
import dev.serval.api.config.ServalConfig;
import dev.serval.model.Classification;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.Predictor;
import dev.serval.model.text.EmbeddingIO;
import dev.serval.spec.DeploymentSpec;
import dev.serval.tensor.Tensor;
import dev.serval.tensor.Tensors;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RepositoryModelSource} hands every kind the descriptor's {@code engine} options and each text kind its
 * {@code output}: models exported with other output names load and answer as the standard ones do, and a wrong name
 * fails the load listing the graph's outputs. Plain JUnit on a repository in a temporary folder, with the tiny models
 * of {@code scripts/make_tiny_encoder.py} and {@code scripts/make_tiny_models.py}.
 */
class DescriptorLoadingTest {

    private static final Path CORE_MODELS = Path.of("..", "platform-core", "src", "test", "resources", "models");
    private static final List<String> TEXTS = List.of("Hi.", "How do I reset my password?", "i love it",
            "this movie was terrible!", "the service was fine, the food was great.");

    @TempDir
    static Path temp;

    private static RepositoryModelSource source;

    @BeforeAll
    static void createRepository() throws IOException {
        Path root = temp.resolve("repository");
        source = new RepositoryModelSource(config(root), new DeploymentRegistry(), new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
        Path tokenizer = root.resolve("all-minilm-l6-v2").resolve("1").resolve("tokenizer.json"); // bundled
        version(root, "encoder", "1", "kind: text-embedding\nmax_length: 64\n",
                Map.of("model.onnx", CORE_MODELS.resolve("tiny-fp32-encoder/model.onnx"), "tokenizer.json", tokenizer));
        version(root, "encoder", "2", """
                        kind: text-embedding
                        max_length: 64
                        output: token_embeddings
                        engine:
                          optLevel: NO_OPT
                          executionMode: PARALLEL
                          interOpNumThreads: 2
                        """,
                Map.of("model.onnx", CORE_MODELS.resolve("tiny-encoder-token-embeddings/model.onnx"),
                        "tokenizer.json", tokenizer));
        version(root, "encoder", "3", "kind: text-embedding\nmax_length: 64\n",
                Map.of("model.onnx", CORE_MODELS.resolve("tiny-encoder-token-embeddings/model.onnx"),
                        "tokenizer.json", tokenizer));
        Map<String, Path> classifierFiles = Map.of("model.onnx", CORE_MODELS.resolve("tiny-classifier/model.onnx"),
                "tokenizer.json", CORE_MODELS.resolve("tiny-classifier/tokenizer.json"));
        version(root, "classifier", "1", "kind: text-classification\nmax_length: 16\nlabels: [neg, neu, pos]\n",
                classifierFiles);
        version(root, "classifier", "2", """
                        kind: text-classification
                        max_length: 16
                        labels: [neg, neu, pos]
                        output: class_logits
                        engine:
                          optLevel: BASIC_OPT
                          cpuArenaAllocator: true
                        """,
                Map.of("model.onnx", CORE_MODELS.resolve("tiny-classifier-renamed/model.onnx"),
                        "tokenizer.json", CORE_MODELS.resolve("tiny-classifier/tokenizer.json")));
        version(root, "mlp", "1", "kind: tensor\nengine:\n  optLevel: NO_OPT\n",
                Map.of("model.onnx", CORE_MODELS.resolve("tiny-mlp/model.onnx")));
    }

    /** A {@link ServalConfig} that only knows its repository path, all {@link RepositoryModelSource} reads. */
    private static ServalConfig config(Path root) {
        ServalConfig.Repository repository = (ServalConfig.Repository) Proxy.newProxyInstance(
                DescriptorLoadingTest.class.getClassLoader(), new Class<?>[] {ServalConfig.Repository.class},
                (proxy, method, args) -> method.getName().equals("path") ? root : unexpected(method.getName()));
        return (ServalConfig) Proxy.newProxyInstance(DescriptorLoadingTest.class.getClassLoader(),
                new Class<?>[] {ServalConfig.class},
                (proxy, method, args) -> method.getName().equals("repository") ? repository
                        : unexpected(method.getName()));
    }

    private static Object unexpected(String method) {
        throw new UnsupportedOperationException("the test config has no " + method + "()");
    }

    private static void version(Path root, String model, String version, String descriptor, Map<String, Path> files)
            throws IOException {
        Path dir = Files.createDirectories(root.resolve(model).resolve(version));
        for (Map.Entry<String, Path> file : files.entrySet()) {
            Files.copy(file.getValue(), dir.resolve(file.getKey()));
        }
        Files.writeString(dir.resolve("model.yaml"), descriptor);
    }

    private static DeploymentSpec deployment(String model, String version) {
        return ConfigParser.deployment("d", new ObjectMapper().valueToTree(Map.of("model", model, "version", version)),
                "test");
    }

    @SuppressWarnings("unchecked")
    private static <I, O> Model<I, O> load(String model, String version) throws Exception {
        DeploymentSpec spec = deployment(model, version);
        return (Model<I, O>) source.load(spec);
    }

    @Test
    void anEncoderWhoseDescriptorNamesItsOutputAndOptionsEmbedsAsTheStandardOne() throws Exception {
        try (Model<String, Embedding> standard = load("encoder", "1");
                Model<String, Embedding> renamed = load("encoder", "2");
                Predictor<String, Embedding> a = standard.newPredictor();
                Predictor<String, Embedding> b = renamed.newPredictor()) {
            assertSame(EmbeddingIO.instance(), renamed.io()); // a text embedding model
            for (String text : TEXTS) {
                assertArrayEquals(a.predict(text).vector(), b.predict(text).vector(), 1e-6f, text);
            }
        }
    }

    @Test
    void aDescriptorThatLeavesTheOutputAtItsDefaultFailsTheLoadListingTheGraphsOutputs() {
        Exception error = assertThrows(IOException.class, () -> load("encoder", "3"));
        assertTrue(error.getMessage().endsWith("has no output 'last_hidden_state' to read; its outputs are"
                + " [sentence_embedding, token_embeddings]"), error.getMessage());
    }

    @Test
    void aClassifierWhoseDescriptorNamesItsOutputAndOptionsScoresAsTheStandardOne() throws Exception {
        try (Model<String, Classification> standard = load("classifier", "1");
                Model<String, Classification> renamed = load("classifier", "2");
                Predictor<String, Classification> a = standard.newPredictor();
                Predictor<String, Classification> b = renamed.newPredictor()) {
            Tensors labelled = renamed.io().outputs(List.of(Classification.of(new float[] {1, 0, 0}, 1),
                    Classification.of(new float[] {0, 1, 0}, 1), Classification.of(new float[] {0, 0, 1}, 1)));
            assertArrayEquals(new String[] {"neg", "neu", "pos"}, (String[]) labelled.get("label").orElseThrow().data());
            for (String text : TEXTS) {
                assertArrayEquals(a.predict(text).scores(), b.predict(text).scores(), 1e-6f, text);
            }
        }
    }

    @Test
    void aTensorModelLoadsWithItsEngineOptions() throws Exception {
        try (Model<Tensors, Tensors> mlp = load("mlp", "1");
                Predictor<Tensors, Tensors> predictor = mlp.newPredictor()) {
            Tensors answer = predictor.predict(new Tensors(List.of(Tensor.of("input", new float[] {1, 2, 3, 4}, 1, 4))));
            assertArrayEquals(new long[] {1, 2}, answer.get("output").orElseThrow().shape());
        }
    }
}
