package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.api.repository.ModelDescriptor;
import dev.serval.api.repository.ModelKind;
import dev.serval.api.repository.ModelRepository;
import dev.serval.predictor.LongInputs;
import dev.serval.predictor.Model;
import dev.serval.predictor.ModelFiles;
import dev.serval.predictor.NoopModel;
import dev.serval.predictor.TensorModel;
import dev.serval.predictor.TextClassificationModel;
import dev.serval.predictor.TextEmbeddingModel;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.LongInputPolicy;
import dev.serval.spec.ModelReference;
import jakarta.inject.Singleton;
import java.util.Map;

/**
 * Models from the model repository ({@code serval.repository.path}), by name and version. At startup the repository
 * is created if needed and receives the models Serval ships, unless they are there already:
 * {@code all-minilm-l6-v2/1} (quantised all-MiniLM-L6-v2, a text-embedding model) and {@code noop/1}.
 */
@Singleton
public class RepositoryModelSource implements ModelSource {

    /** The bundled MiniLM's class-path resources (from the langchain4j artifact). */
    private static final String BUNDLED_MODEL = "all-minilm-l6-v2-q.onnx";
    private static final String BUNDLED_TOKENIZER = "all-minilm-l6-v2-q-tokenizer.json";

    private final ModelRepository repository;

    RepositoryModelSource(ServalConfig config) {
        this.repository = new ModelRepository(config.repository().path());
        installBundled(repository);
    }

    public ModelRepository repository() {
        return repository;
    }

    static void installBundled(ModelRepository repository) {
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader() != null
                ? Thread.currentThread().getContextClassLoader() : RepositoryModelSource.class.getClassLoader();
        repository.install("all-minilm-l6-v2", "1", """
                        kind: text-embedding
                        file: model.onnx
                        tokenizer: tokenizer.json
                        max_length: 256
                        description: quantised all-MiniLM-L6-v2 (sentence-transformers), 384 dimensions, shipped with Serval
                        """,
                Map.of("model.onnx", (dir, name) -> ModelFiles.extract(classLoader, BUNDLED_MODEL, dir, name),
                        "tokenizer.json", (dir, name) -> ModelFiles.extract(classLoader, BUNDLED_TOKENIZER, dir, name)));
        repository.install("noop", "1", """
                kind: noop
                description: answers every request with its own input tensors (measures the platform's overhead)
                """, Map.of());
    }

    @Override
    public boolean accepts(String model) {
        return !model.contains(":");
    }

    @Override
    public ModelKind kind(DeploymentSpec spec) {
        return repository.resolve(spec.model().name(), spec.version()).descriptor().kind();
    }

    @Override
    public Model<?, ?> load(ModelReference reference, DeploymentSpec spec) throws Exception {
        ModelRepository.ModelVersion found = repository.resolve(reference.name(), spec.version());
        ModelDescriptor descriptor = found.descriptor();
        int maxLength = reference.maxLength() > 0 ? reference.maxLength() : descriptor.maxLength();
        LongInputs longInputs = reference.longInputs() == LongInputPolicy.CHUNK ? LongInputs.chunk(reference.chunkOverlap(),
                reference.maxChunksPerInput())
                : LongInputs.truncate();
        // the descriptor's engine options and output; intra-op threads always come from the deployment
        return switch (descriptor.kind()) {
            case TEXT_EMBEDDING -> TextEmbeddingModel.load(found.file(), found.tokenizer(), maxLength,
                    spec.predictors().intraOpThreads(), spec.batching().batchInvariance(), longInputs, descriptor.engine(),
                    descriptor.output());
            case TENSOR -> TensorModel.load(found.file(), spec.predictors().intraOpThreads(), descriptor.engine());
            case NOOP -> new NoopModel();
            case TEXT_CLASSIFICATION -> TextClassificationModel.load(found.file(), found.tokenizer(),
                    descriptor.labels(), maxLength, spec.predictors().intraOpThreads(), spec.batching().batchInvariance(), longInputs,
                    reference.chunkReduction(),
                    descriptor.engine(), descriptor.output());
        };
    }
}
