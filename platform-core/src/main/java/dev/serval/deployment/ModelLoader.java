package dev.serval.deployment;

import dev.serval.predictor.Model;

/** Loads a deployment's model; called once, on the deployment's loader thread, never on a request thread. */
@FunctionalInterface
public interface ModelLoader<I, O> {

    Model<I, O> load() throws Exception;
}
