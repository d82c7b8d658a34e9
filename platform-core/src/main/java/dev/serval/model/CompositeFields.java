package dev.serval.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The {@code model.yaml} fields only the composite kinds have, checked into a {@link Composite}: a pipeline's
 * {@code steps} ({@link PipelineStep}, routes included), a java model's {@code jar} and {@code class}. What a
 * deployment name is belongs to the deployment's spec, above this package: the caller hands the rule in. Stateless.
 */
final class CompositeFields {

    /** The most steps a pipeline may have. */
    static final int MAX_STEPS = 16;
    private static final List<String> STEP_FIELDS = List.of("deployment", "route", "from", "inputs");
    private static final List<String> ROUTE_FIELDS = List.of("on", "cases", "default");
    private static final Pattern JAVA_CLASS =
            Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*){0,63}");

    private CompositeFields() {
    }

    /**
     * A pipeline's {@code steps} or a java model's {@code jar} and {@code class}, checked; null for the other kinds,
     * which must have none of them.
     */
    static Composite composite(JsonNode node, ModelKind kind, String where, Predicate<String> deploymentNames) {
        for (String field : List.of("steps", "jar", "class")) {
            boolean own = kind == ModelKind.PIPELINE ? field.equals("steps") : kind == ModelKind.JAVA && !field.equals("steps");
            if (node.has(field) && !own) {
                throw new IllegalArgumentException(where + ": field '" + field + "' is for " + (field.equals("steps")
                        ? "a pipeline" : "a java model") + ", not a " + kind.id() + " model");
            }
        }
        if (kind == ModelKind.JAVA) {
            return javaHandler(node, where);
        }
        if (kind != ModelKind.PIPELINE) {
            return null;
        }
        JsonNode steps = node.get("steps");
        if (steps == null || !steps.isArray() || steps.isEmpty() || steps.size() > MAX_STEPS) {
            throw new IllegalArgumentException(where + ": a pipeline needs 'steps', a list of 1 to " + MAX_STEPS
                    + " steps such as '- deployment: echo'");
        }
        List<PipelineStep> parsed = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            parsed.add(step(steps.get(i), i, where + ": steps[" + i + "]", deploymentNames));
        }
        return new Composite.Pipeline(parsed);
    }

    private static Composite.JavaHandler javaHandler(JsonNode node, String where) {
        if (node.has("file") || node.has("tokenizer")) {
            throw new IllegalArgumentException(where + ": a java model names its jar with 'jar', not 'file'");
        }
        String jar = DescriptorFields.relativePath(node, "jar", null, where);
        if (jar == null || !jar.endsWith(".jar")) {
            throw new IllegalArgumentException(where + ": a java model needs 'jar', the handler's jar file "
                    + "(*.jar) in the version folder");
        }
        JsonNode className = node.get("class");
        if (className == null || !className.isTextual() || !JAVA_CLASS.matcher(className.textValue()).matches()) {
            throw new IllegalArgumentException(where + ": a java model needs 'class', the fully qualified name of "
                    + "its class implementing platform-spi's Handler (for example com.example.MyHandler), not "
                    + className);
        }
        return new Composite.JavaHandler(jar, className.textValue());
    }

    private static PipelineStep step(JsonNode step, int index, String where, Predicate<String> deploymentNames) {
        if (step == null || !step.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping such as 'deployment: echo'");
        }
        DescriptorFields.onlyKnownFields(step, STEP_FIELDS, where);
        if (step.has("deployment") == step.has("route")) {
            throw new IllegalArgumentException(where + " needs either 'deployment' (the deployment it calls) or "
                    + "'route' (how it chooses one)");
        }
        String deployment = step.has("deployment")
                ? deploymentName(step.get("deployment"), where + ": 'deployment'", deploymentNames) : null;
        PipelineStep.Route route = step.has("route")
                ? route(step.get("route"), index, where + ": 'route'", deploymentNames) : null;
        boolean fromRequest = false;
        JsonNode from = step.get("from");
        if (from != null) {
            if (index == 0 || !from.isTextual() || !Set.of("request", "previous").contains(from.textValue())) {
                throw new IllegalArgumentException(where + ": 'from' is 'request' (the request's tensors) or "
                        + "'previous' (the previous step's outputs, the default), on a step after the first; not "
                        + from);
            }
            fromRequest = from.textValue().equals("request");
        }
        return new PipelineStep(deployment, route, fromRequest, inputs(step.get("inputs"), index, where));
    }

    /** A step's {@code inputs}: previous output name to this step's input name, each target once. */
    private static Map<String, String> inputs(JsonNode mapping, int index, String where) {
        Map<String, String> inputs = new LinkedHashMap<>();
        if (mapping == null) {
            return inputs;
        }
        if (index == 0) {
            throw new IllegalArgumentException(where + ": the first step takes the request's tensors as they are; "
                    + "'inputs' maps a previous step's outputs");
        }
        if (!mapping.isObject() || mapping.size() > 64) {
            throw new IllegalArgumentException(where + ": 'inputs' must be a mapping of at most 64 entries "
                    + "'previous output: this step's input'");
        }
        Set<String> targets = new HashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = mapping.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode to = entry.getValue();
            if (!to.isTextual() || to.textValue().isEmpty() || to.textValue().length() > 256
                    || entry.getKey().isEmpty() || entry.getKey().length() > 256) {
                throw new IllegalArgumentException(where + ": 'inputs' maps output names to input names (1 to 256 "
                        + "characters each), not '" + entry.getKey() + "': " + to);
            }
            if (!targets.add(to.textValue())) {
                throw new IllegalArgumentException(where + ": 'inputs' maps two outputs to '" + to.textValue() + "'");
            }
            inputs.put(entry.getKey(), to.textValue());
        }
        return inputs;
    }

    private static String deploymentName(JsonNode node, String where, Predicate<String> deploymentNames) {
        if (node == null || !node.isTextual() || !deploymentNames.test(node.textValue())) {
            throw new IllegalArgumentException(where + " must name a deployment, not " + node);
        }
        return node.textValue();
    }

    /** A step's {@code route}: {@code on} (an output name), {@code cases} (value: deployment), optional {@code default}. */
    private static PipelineStep.Route route(JsonNode route, int index, String where, Predicate<String> deploymentNames) {
        if (index == 0) {
            throw new IllegalArgumentException(where + ": the first step cannot route; a route chooses by an output of "
                    + "the step before it");
        }
        if (route == null || !route.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping with 'on', 'cases' and optionally 'default'");
        }
        DescriptorFields.onlyKnownFields(route, ROUTE_FIELDS, where);
        JsonNode on = route.get("on");
        if (on == null || !on.isTextual() || on.textValue().isEmpty() || on.textValue().length() > 256) {
            throw new IllegalArgumentException(where + ": 'on' must name the previous step's output to route by, not "
                    + on);
        }
        JsonNode cases = route.get("cases");
        if (cases == null || !cases.isObject() || cases.isEmpty() || cases.size() > 64) {
            throw new IllegalArgumentException(where + ": 'cases' must map 1 to 64 values to deployments, such as "
                    + "'{en: classifier-en}'");
        }
        Map<String, String> byValue = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = cases.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            if (entry.getKey().length() > 256) {
                throw new IllegalArgumentException(where + ": a case value is longer than 256 characters");
            }
            byValue.put(entry.getKey(), deploymentName(entry.getValue(), where + ": case '" + entry.getKey() + "'",
                    deploymentNames));
        }
        String otherwise = route.has("default")
                ? deploymentName(route.get("default"), where + ": 'default'", deploymentNames) : null;
        return new PipelineStep.Route(on.textValue(), byValue, otherwise);
    }
}
