package dev.serval.model;

import java.util.List;
import java.util.Objects;

/** The part of a model descriptor that only the composite kinds have. */
public sealed interface Composite {

    /** {@code kind: pipeline}: its steps, in order (at least one). */
    record Pipeline(List<PipelineStep> steps) implements Composite {
        public Pipeline {
            steps = List.copyOf(steps);
            if (steps.isEmpty()) {
                throw new IllegalArgumentException("a pipeline needs at least one step");
            }
        }
    }

    /**
     * {@code kind: java}: a handler class in a jar of the version folder.
     *
     * @param jar       the jar, relative to the version folder
     * @param className the class implementing {@code dev.serval.spi.Handler}
     */
    record JavaHandler(String jar, String className) implements Composite {
        public JavaHandler {
            Objects.requireNonNull(jar, "jar");
            Objects.requireNonNull(className, "className");
        }
    }
}
