package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.api.repository.ModelRepository;
import dev.serval.compose.Callees;
import dev.serval.compose.Composition;
import dev.serval.deployment.Deployment;
import dev.serval.model.Model;
import dev.serval.model.ModelCatalog;
import dev.serval.model.ModelFiles;
import dev.serval.model.ModelKind;
import dev.serval.spec.DeploymentSpec;
import io.micrometer.core.instrument.MeterRegistry;
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
    /** The deployments a pipeline or a handler calls: the plain deployments this server runs now, by name. */
    private final Callees callees;

    RepositoryModelSource(ServalConfig config, DeploymentRegistry deployments, MeterRegistry meters) {
        this.repository = new ModelRepository(config.repository().path());
        this.callees = new Callees() {
            @Override
            public Deployment<?, ?> find(String name) {
                ServedDeployment served = deployments.plain(name);
                return served == null ? null : served.deployment();
            }

            @Override
            public MeterRegistry meters() {
                return meters;
            }
        };
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
    public Model<?, ?> load(DeploymentSpec spec) throws Exception {
        ModelRepository.ModelVersion found = repository.resolve(spec.model().name(), spec.version());
        return ModelCatalog.load(found.descriptor(), found.file(), found.tokenizer(), spec.loadOptions(),
                new Composition(spec.name(), found.directory(), callees));
    }
}
