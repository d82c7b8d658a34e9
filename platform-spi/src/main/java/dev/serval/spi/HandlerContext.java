package dev.serval.spi;

import java.nio.file.Path;

/** What a handler is given when its replica starts ({@link Handler#open}). */
public interface HandlerContext {

    /** The name of the deployment this handler serves. */
    String deployment();

    /** The model version folder the handler's jar came from (read-only: its files, for example a vocabulary). */
    Path versionFolder();

    /**
     * A handle to the deployment named {@code name}. The deployment need not exist yet: each call looks it up and fails
     * (503, naming it) while it does not.
     *
     * @throws IllegalArgumentException when {@code name} is not a deployment name or names this deployment
     */
    DeploymentHandle deployment(String name);
}
