package dev.serval.api.serving;

import dev.serval.api.config.ServalConfig;
import dev.serval.predictor.Embedding;
import dev.serval.predictor.Model;

/**
 * Turns a deployment's {@code model} reference into a loaded text-embedding model. CDI beans implementing
 * this are consulted in turn; the first that {@linkplain #accepts accepts} the reference loads it.
 * {@link #load} runs on the deployment's loader thread, never on an HTTP thread.
 */
public interface ModelSource {

    boolean accepts(String reference);

    Model<String, Embedding> load(String reference, ServalConfig.Deployment settings) throws Exception;
}
