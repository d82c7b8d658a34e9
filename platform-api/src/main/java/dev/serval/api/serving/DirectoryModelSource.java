package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.predictor.Embedding;
import dev.serval.predictor.Model;
import dev.serval.predictor.TextEmbeddingModel;
import jakarta.inject.Singleton;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A text-embedding model in a directory of its own: {@code model.onnx} (an encoder with output
 * {@code last_hidden_state}) and {@code tokenizer.json}. Accepts any reference without a {@code scheme:}.
 */
@Singleton
public class DirectoryModelSource implements ModelSource {

    @Override
    public boolean accepts(String reference) {
        return !reference.matches("^[a-z][a-z0-9+.-]*:.*") || reference.matches("^[A-Za-z]:[\\\\/].*");
    }

    @Override
    public Model<String, Embedding> load(String reference, ServalConfig.Deployment settings) throws Exception {
        Path dir = Path.of(reference);
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("model directory " + dir.toAbsolutePath() + " does not exist");
        }
        return TextEmbeddingModel.load(dir.resolve("model.onnx"), dir.resolve("tokenizer.json"),
                settings.maxLength(), settings.intraOpThreads(), settings.batchInvariance(), settings.toLongInputs());
    }
}
