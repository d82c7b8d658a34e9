package dev.serval.model;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Loads the composite kinds (pipeline, java), which call other deployments or run the user's code: that machinery
 * lives above the models ({@code dev.serval.compose}, which implements this), so {@link ModelCatalog} is handed a
 * loader by its caller instead of naming it. One loader serves one loading deployment and model version.
 * Thread-safe; loading blocks (waiting for a pipeline's steps, opening a handler), so it runs on a launcher thread.
 */
public interface CompositeLoader {

    /**
     * Loads the model {@code composite} describes.
     *
     * @param composite the descriptor's {@link ModelDescriptor#composite()}: a pipeline's steps or a handler's jar and
     *                  class
     * @param file      a java model's jar, resolved inside the version folder by the caller; not read by a pipeline
     * @throws IllegalArgumentException when a pipeline's steps do not line up
     * @throws IOException              when a handler's jar or class cannot be loaded, created or opened
     */
    Model<?, ?> load(Composite composite, Path file) throws IOException;
}
