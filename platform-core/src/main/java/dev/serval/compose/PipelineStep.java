package dev.serval.compose;

import java.util.Map;
import java.util.Objects;

/**
 * One step of a pipeline: the deployment it calls and how the previous step's output names map to this step's input
 * names.
 *
 * @param deployment the deployment the step calls
 * @param inputs     previous step's output name to this step's input name ({@code inputs: {from: to}}); outputs not
 *                   named keep their names. Empty for the first step, which takes the request's tensors as they are
 */
public record PipelineStep(String deployment, Map<String, String> inputs) {

    public PipelineStep {
        Objects.requireNonNull(deployment, "deployment");
        inputs = Map.copyOf(inputs);
    }
}
