package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.repository.ModelRepository;
import dev.serval.repository.MultiplexedDeployment;
import dev.serval.spec.DeploymentSpec;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.function.Function;

/**
 * Models from the model repository ({@code serval.repository.path}), by name and version: the engine's repository
 * built from the server's settings, with the deployments this server runs as the callees of its composite models. At
 * startup the repository is created if needed and receives the models Serval ships
 * ({@link ModelRepository#withBundledModels}).
 */
@Singleton
public class RepositoryModelSource implements ModelSource {

    private final ModelRepository repository;
    private final MeterRegistry meters;

    /**
     * The repository loads a pipeline's or handler's model with the deployments it may call: the plain deployments
     * this server runs now, by name, looked up on every call.
     */
    RepositoryModelSource(ServalConfig config, DeploymentRegistry deployments, MeterRegistry meters) {
        this.meters = meters;
        ClassLoader classLoader = Thread.currentThread().getContextClassLoader() != null
                ? Thread.currentThread().getContextClassLoader() : RepositoryModelSource.class.getClassLoader();
        this.repository = ModelRepository.withBundledModels(config.repository().path(), classLoader, name -> {
            ServedDeployment served = deployments.plain(name);
            return served == null ? null : served.deployment();
        }, meters);
    }

    public ModelRepository repository() {
        return repository;
    }

    /**
     * The engine's multiplexed deployment of {@code spec} (whose {@code model} is a glob over this repository), its
     * models loaded with this server's deployments as their callees; {@code edge} makes what the edge keeps beside
     * each model's deployment.
     */
    MultiplexedDeployment<ServedDeployment> multiplex(DeploymentSpec spec, ServingEngine engine,
            Function<MultiplexedDeployment.Member<ServedDeployment>, ServedDeployment> edge) {
        return new MultiplexedDeployment<>(spec, engine, repository, meters, edge);
    }

    @Override
    public boolean accepts(String model) {
        return !model.contains(":");
    }

    @Override
    public ModelKind kind(DeploymentSpec spec) {
        return repository.resolve(spec.model().name(), spec.version()).kind();
    }

    /**
     * The tokens a text of the spec's model keeps (its descriptor's {@code max_length}), or 0 when the repository
     * holds no such model version (a multiplexed deployment's glob, a model of another source).
     */
    public int maxLength(DeploymentSpec spec) {
        try {
            return repository.resolve(spec.model().name(), spec.version()).descriptor().maxLength();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** The label names of the spec's model, in logit order; empty when it has none or the repository lacks it. */
    public List<String> labels(DeploymentSpec spec) {
        try {
            List<String> labels = repository.resolve(spec.model().name(), spec.version()).descriptor().labels();
            return labels == null ? List.of() : labels;
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    @Override
    public Model<?, ?> load(DeploymentSpec spec) throws Exception {
        return repository.load(spec);
    }
}
