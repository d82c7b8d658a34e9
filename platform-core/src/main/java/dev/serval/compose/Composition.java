package dev.serval.compose;

import dev.serval.deployment.Callees;
import dev.serval.model.Composite;
import dev.serval.model.CompositeLoader;
import dev.serval.model.Model;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * What loading a composite model (a pipeline, a custom handler) needs beyond its descriptor, and the loader of those
 * kinds that the model catalog is handed ({@link CompositeLoader}): the catalog knows the kinds, this package knows
 * how they call deployments.
 *
 * @param deployment    the name of the deployment loading it (the caller in its handles' meters and messages)
 * @param versionFolder the model version's folder (a handler's jar and files)
 * @param callees       the deployments it may call
 */
public record Composition(String deployment, Path versionFolder, Callees callees) implements CompositeLoader {

    /** How long a pipeline's load waits for a step that is still starting. */
    static final Duration STEP_READY_WAIT = Duration.ofSeconds(120);

    public Composition {
        Objects.requireNonNull(deployment, "deployment");
        Objects.requireNonNull(versionFolder, "versionFolder");
        Objects.requireNonNull(callees, "callees");
    }

    @Override
    public Model<?, ?> load(Composite composite, Path file) throws IOException {
        return switch (composite) {
            case Composite.Pipeline pipeline -> PipelineModel.load(this, pipeline, STEP_READY_WAIT);
            case Composite.JavaHandler handler -> JavaHandlerModel.load(this, handler, file);
        };
    }
}
