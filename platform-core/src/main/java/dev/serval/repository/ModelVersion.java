package dev.serval.repository;

import dev.serval.compose.Composition;
import dev.serval.deployment.Callees;
import dev.serval.model.Composite;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelCatalog;
import dev.serval.model.ModelDescriptor;
import dev.serval.model.ModelKind;
import dev.serval.model.PipelineStep;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * One model version found in the repository ({@link ModelRepository#resolve}): its folder and its checked descriptor,
 * whose files were there when it was resolved.
 *
 * @param name       the model's folder name
 * @param version    the version's folder name
 * @param directory  the version folder (links followed, inside the repository)
 * @param descriptor its {@code model.yaml}
 */
public record ModelVersion(String name, String version, Path directory, ModelDescriptor descriptor) {

    public ModelVersion {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(descriptor, "descriptor");
    }

    /** What the model is. */
    public ModelKind kind() {
        return descriptor.kind();
    }

    /**
     * The deployments each step of a pipeline may call ({@code PipelineStep.targets}: its own, or its route's cases and
     * default), in step order; empty for the other kinds. What the edge checks against the deployments it runs.
     */
    public List<List<String>> steps() {
        return descriptor.composite() instanceof Composite.Pipeline pipeline
                ? pipeline.steps().stream().map(PipelineStep::targets).toList() : List.of();
    }

    /** The descriptor's {@code file} (a java model's {@code jar}), inside the version folder. */
    public Path file() {
        return directory.resolve(descriptor.composite() instanceof Composite.JavaHandler handler
                ? handler.jar() : descriptor.file());
    }

    /** The descriptor's {@code tokenizer}, inside the version folder. */
    public Path tokenizer() {
        return directory.resolve(descriptor.tokenizer());
    }

    /**
     * Loads this version for a deployment ({@link ModelCatalog#load}); blocks, so it runs on a launcher thread.
     *
     * @param deployment the deployment loading it (a composite model's caller in its meters and messages)
     * @param options    what the deployment asks on top of the descriptor
     * @param callees    the deployments a composite model may call
     * @throws IllegalArgumentException when an option does not fit the model, or a pipeline's steps do not line up
     * @throws IOException              when a file is unreadable or the model fails its first inference
     */
    public Model<?, ?> load(String deployment, LoadOptions options, Callees callees) throws IOException {
        Path ranges = descriptor.quantizationRanges().isEmpty() ? null
                : directory.resolve(descriptor.quantizationRanges());
        return ModelCatalog.load(descriptor, file(), tokenizer(), directory.resolve(descriptor.config()), ranges,
                options, new Composition(deployment, directory, callees));
    }
}
