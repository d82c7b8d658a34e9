package dev.serval.api.serving;

import dev.serval.api.config.InvalidConfig;
import dev.serval.spec.DeploymentSpec;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The rules a set of deployments meets together, whatever each one's own fields say: their predictor threads within
 * the server's limit ({@code serval.limits.max-predictor-threads}), one deployment per name a request can address, and
 * pipelines whose steps are deployed, of one model, and never call back into themselves. {@link Deployments} checks
 * the set a change would leave before it touches anything; each rule throws {@link InvalidConfig} naming the source,
 * the deployment and the field. Stateless apart from what it is given; safe from any thread.
 */
final class DeploymentSetRules {

    private final int maxPredictorThreads;
    /** The repository's model names now (the models multiplexed deployments' globs match). */
    private final Supplier<Collection<String>> repositoryModels;
    /** The deployments each step of a pipeline may call, in step order; empty for another kind. */
    private final Function<DeploymentSpec, List<List<String>>> stepsOf;

    DeploymentSetRules(int maxPredictorThreads, Supplier<Collection<String>> repositoryModels,
            Function<DeploymentSpec, List<List<String>>> stepsOf) {
        this.maxPredictorThreads = maxPredictorThreads;
        this.repositoryModels = repositoryModels;
        this.stepsOf = stepsOf;
    }

    /**
     * Refuses a set of deployments whose predictor threads together pass {@code serval.limits.max-predictor-threads},
     * naming the deployment that asks for the most.
     */
    void limits(Collection<DeploymentSpec> all, String source) {
        long threads = 0;
        DeploymentSpec largest = null;
        for (DeploymentSpec each : all) {
            long own = predictorThreads(each);
            threads += own;
            if (largest == null || own > predictorThreads(largest)) {
                largest = each;
            }
        }
        if (threads > maxPredictorThreads) {
            String replicas = largest.isAutoscaled() ? "autoscaling.max_replicas" : "num_replicas";
            String models = largest.isMultiplexed() ? " x max_models_per_replica" : "";
            throw new InvalidConfig(source, largest.name(), replicas, "the deployments would run " + threads
                    + " predictor threads (" + replicas + models + " x predictor_threads, this one "
                    + largest.maxReplicas() + (largest.isMultiplexed() ? " x "
                    + largest.multiplex().maxModelsPerReplica() : "") + " x "
                    + largest.predictors().predictorThreads() + "); the server allows " + maxPredictorThreads
                    + " (serval.limits.max-predictor-threads)");
        }
    }

    /** The most predictor threads a deployment runs: each model a multiplexed replica holds has its own. */
    private static long predictorThreads(DeploymentSpec spec) {
        long models = spec.isMultiplexed() ? spec.multiplex().maxModelsPerReplica() : 1;
        return (long) spec.maxReplicas() * models * spec.predictors().predictorThreads();
    }

    /**
     * Refuses a set of deployments in which one name would have two addresses: a deployment whose name a multiplexed
     * deployment's glob matches, or a repository model that two multiplexed deployments' globs match.
     */
    void addresses(Collection<DeploymentSpec> all, String source) {
        List<DeploymentSpec> globs = all.stream().filter(DeploymentSpec::isMultiplexed).toList();
        if (globs.isEmpty()) {
            return;
        }
        Collection<String> models = repositoryModels.get();
        for (int i = 0; i < globs.size(); i++) {
            DeploymentSpec glob = globs.get(i);
            if (glob.globMatches(glob.name())) {
                throw new InvalidConfig(source, glob.name(), "model", "the glob '" + glob.model().name()
                        + "' matches the deployment's own name: a model of that name could not be called by it; "
                        + "rename the deployment or narrow the glob");
            }
            for (DeploymentSpec other : all) {
                if (other != glob && glob.globMatches(other.name())) {
                    throw new InvalidConfig(source, glob.name(), "model", "the glob '" + glob.model().name()
                            + "' matches the name of deployment '" + other.name() + "': requests for '" + other.name()
                            + "' would have two deployments; rename it or narrow the glob");
                }
            }
            for (DeploymentSpec later : globs.subList(i + 1, globs.size())) {
                for (String model : models) {
                    if (glob.globMatches(model) && later.globMatches(model)) {
                        throw new InvalidConfig(source, later.name(), "model", "repository model '" + model
                                + "' matches both '" + glob.model().name() + "' (deployment '" + glob.name()
                                + "') and '" + later.model().name() + "'; a model is served by one deployment");
                    }
                }
            }
        }
    }

    /**
     * Refuses a pipeline whose steps are not among {@code all} (the deployments once the change is applied), that calls
     * itself, or that reaches itself through other pipelines (each would wait for the other to load, and a request
     * would never end). Whether the steps' tensors line up is checked when the pipeline loads, against the steps'
     * models.
     */
    void steps(Collection<DeploymentSpec> all, String source) {
        Set<String> names = new HashSet<>();
        all.forEach(spec -> names.add(spec.name()));
        Map<String, List<String>> pipelines = new LinkedHashMap<>();
        Set<String> multiplexed = new HashSet<>();
        all.stream().filter(DeploymentSpec::isMultiplexed).forEach(spec -> multiplexed.add(spec.name()));
        for (DeploymentSpec spec : all) {
            List<List<String>> steps = stepsOf.apply(spec);
            if (steps.isEmpty()) {
                continue;
            }
            for (int i = 0; i < steps.size(); i++) {
                for (String step : steps.get(i)) {
                    if (step.equals(spec.name()) || !names.contains(step)) {
                        throw new InvalidConfig(source, spec.name(), "model", "pipeline '" + spec.model().name()
                                + "' step " + (i + 1) + " calls deployment '" + step + "', " + (step.equals(spec.name())
                                ? "the pipeline itself" : "which is not deployed (deployments: "
                                + String.join(", ", names.stream().sorted().toList()) + ")"));
                    }
                    if (multiplexed.contains(step)) {
                        throw new InvalidConfig(source, spec.name(), "model", "pipeline '" + spec.model().name()
                                + "' step " + (i + 1) + " calls deployment '" + step + "', which is multiplexed (it "
                                + "serves many models, each by its own name); a step calls a deployment of one model");
                    }
                }
            }
            pipelines.put(spec.name(), steps.stream().flatMap(List::stream).toList());
        }
        for (String start : pipelines.keySet()) {
            List<String> loop = cycle(start, pipelines, new ArrayList<>(List.of(start)));
            if (loop != null) {
                throw new InvalidConfig(source, start, "model", "pipelines call each other in a loop: "
                        + String.join(" -> ", loop));
            }
        }
    }

    /** The path from {@code path}'s last pipeline back to {@code start} through pipeline steps, or null. */
    private static List<String> cycle(String start, Map<String, List<String>> pipelines, List<String> path) {
        if (path.size() > pipelines.size() + 1) {
            return null;
        }
        for (String step : pipelines.getOrDefault(path.getLast(), List.of())) {
            if (step.equals(start)) {
                List<String> loop = new ArrayList<>(path);
                loop.add(start);
                return loop;
            }
            if (pipelines.containsKey(step) && !path.contains(step)) {
                path.add(step);
                List<String> found = cycle(start, pipelines, path);
                if (found != null) {
                    return found;
                }
                path.removeLast();
            }
        }
        return null;
    }
}
