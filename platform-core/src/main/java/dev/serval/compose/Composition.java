package dev.serval.compose;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What loading a composite model (a pipeline, a custom handler) needs beyond its descriptor.
 *
 * @param deployment    the name of the deployment loading it (the caller in its handles' meters and messages)
 * @param versionFolder the model version's folder (a handler's jar and files)
 * @param callees       the deployments it may call
 */
public record Composition(String deployment, Path versionFolder, Callees callees) {

    public Composition {
        Objects.requireNonNull(deployment, "deployment");
        Objects.requireNonNull(versionFolder, "versionFolder");
        Objects.requireNonNull(callees, "callees");
    }
}
