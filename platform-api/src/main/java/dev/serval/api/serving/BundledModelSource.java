package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.predictor.Embedding;
import dev.serval.predictor.Model;
import dev.serval.predictor.ModelFiles;
import dev.serval.predictor.TextEmbeddingModel;
import jakarta.inject.Singleton;
import java.nio.file.Path;

/**
 * Models shipped inside Serval, referenced as {@code bundled:NAME}: {@code NAME.onnx} and
 * {@code NAME-tokenizer.json} on the class path, extracted once into {@code serval.model-dir/NAME/}.
 * Serval ships {@code bundled:all-minilm-l6-v2-q} (quantised all-MiniLM-L6-v2).
 */
@Singleton
public class BundledModelSource implements ModelSource {

    static final String PREFIX = "bundled:";

    private final Path modelDir;

    BundledModelSource(ServalConfig config) {
        this.modelDir = config.modelDir();
    }

    @Override
    public boolean accepts(String reference) {
        return reference.startsWith(PREFIX);
    }

    @Override
    public Model<String, Embedding> load(String reference, ServalConfig.Deployment settings) throws Exception {
        String name = reference.substring(PREFIX.length());
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader() != null
                ? Thread.currentThread().getContextClassLoader()
                : BundledModelSource.class.getClassLoader();
        if (!name.matches("[A-Za-z0-9._-]+") || classLoader.getResource(name + ".onnx") == null) {
            throw new IllegalArgumentException("no bundled model '" + name + "'; Serval bundles all-minilm-l6-v2-q");
        }
        Path dir = modelDir.resolve(name);
        return TextEmbeddingModel.load(
                ModelFiles.extract(classLoader, name + ".onnx", dir),
                ModelFiles.extract(classLoader, name + "-tokenizer.json", dir),
                settings.maxLength(),
                settings.intraOpThreads(),
                settings.batchInvariance(),
                settings.toLongInputs());
    }
}
