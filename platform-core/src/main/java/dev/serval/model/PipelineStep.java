package dev.serval.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One step of a pipeline: the deployment it calls, or the deployments it chooses between ({@link Route}); what it is
 * given (the previous step's outputs, or with {@code fromRequest} the request's own tensors); and how those tensors'
 * names map to the step's input names.
 *
 * @param deployment  the deployment the step calls; null for a routed step
 * @param route       how a routed step chooses its deployment; null for a plain step
 * @param fromRequest whether the step takes the request's tensors instead of the previous step's outputs (always so
 *                    for the first step)
 * @param inputs      given tensor name to this step's input name ({@code inputs: {from: to}}); tensors not named keep
 *                    their names
 */
public record PipelineStep(String deployment, Route route, boolean fromRequest, Map<String, String> inputs) {

    public PipelineStep {
        if ((deployment == null) == (route == null)) {
            throw new IllegalArgumentException("a step calls one deployment or routes between several");
        }
        inputs = Map.copyOf(inputs);
    }

    /** A plain step that takes the previous step's outputs. */
    public PipelineStep(String deployment, Map<String, String> inputs) {
        this(deployment, null, false, inputs);
    }

    /** The deployments the step may call: its own, or its route's cases and default, each once, in order. */
    public List<String> targets() {
        return deployment != null ? List.of(deployment) : route.targets();
    }

    /** As descriptors and messages name the step: its deployment, or {@code route on <tensor>}. */
    public String label() {
        return deployment != null ? deployment : "route on " + route.on();
    }

    /**
     * A conditional step: the deployment is chosen by the value of one output of the previous step (for example the
     * {@code label} of a language detector).
     *
     * @param on        the previous step's BYTES output whose value chooses
     * @param cases     value to deployment
     * @param otherwise the deployment for any other value; null to refuse other values (400, naming the value)
     */
    public record Route(String on, Map<String, String> cases, String otherwise) {

        public Route {
            Objects.requireNonNull(on, "on");
            cases = Map.copyOf(cases);
            if (cases.isEmpty()) {
                throw new IllegalArgumentException("a route needs at least one case");
            }
        }

        /** The cases' deployments and the default, each once, cases in value order, the default last. */
        public List<String> targets() {
            List<String> targets = new ArrayList<>();
            cases.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(Map.Entry::getValue)
                    .filter(target -> !targets.contains(target)).forEach(targets::add);
            if (otherwise != null && !targets.contains(otherwise)) {
                targets.add(otherwise);
            }
            return targets;
        }
    }
}
