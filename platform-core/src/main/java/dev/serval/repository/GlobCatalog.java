package dev.serval.repository;

import dev.serval.model.ModelKind;
import dev.serval.multiplex.Multiplexer;
import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.MultiplexSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * What a multiplexed deployment may serve: the repository's models its glob matches, each at its newest version that
 * resolves, with the kind each is served as ({@link Multiplexer.Catalog}).
 *
 * <p>Threads: {@link #scan} runs on the multiplexer's refresher thread (and once while the multiplexer is built); it
 * alone writes {@link #kinds} and {@link #notServed}, each replaced whole (volatile, immutable), read by any thread.
 */
public final class GlobCatalog implements Multiplexer.Catalog {

    private static final System.Logger LOG = System.getLogger(GlobCatalog.class.getName());

    /**
     * One version of a matching model that the last scan skipped, and why: a newer version than the one served (or
     * the only one) that does not resolve, or whose kind is not the model's.
     */
    public record NotServed(String model, String version, String problem) {
    }

    private final ModelRepository repository;
    private final String deployment;
    private final String glob;
    /** The kind a model is served as now, or null while it is not served. */
    private final Function<String, ModelKind> servedKind;
    /** The kind of each model of the last scan. */
    private volatile Map<String, ModelKind> kinds = Map.of();
    /** The versions the last scan skipped. */
    private volatile List<NotServed> notServed = List.of();
    /** Problems already logged, so that a broken model is logged once, not at every scan. */
    private final Set<String> reported = ConcurrentHashMap.newKeySet();

    /**
     * @param deployment the multiplexed deployment (in log messages)
     * @param glob       its {@code model}: which repository models it serves
     * @param servedKind the kind a model is served as now, or null while it is not served
     */
    public GlobCatalog(ModelRepository repository, String deployment, String glob,
            Function<String, ModelKind> servedKind) {
        this.repository = repository;
        this.deployment = deployment;
        this.glob = glob;
        this.servedKind = servedKind;
    }

    /**
     * The repository's models the glob matches, each at its newest version that resolves (a version folder still being
     * copied, or whose descriptor has an error, is skipped: the version before it goes on serving) and whose kind is
     * the kind the model is served as (a model's deployment keeps its kind: a version of another kind is skipped
     * too). Skipped versions are logged once and listed by {@link #notServed}.
     */
    @Override
    public Map<String, Candidate> scan() {
        Map<String, Candidate> found = new HashMap<>();
        Map<String, ModelKind> foundKinds = new HashMap<>();
        List<NotServed> skipped = new ArrayList<>();
        repository.models().forEach((model, versions) -> {
            if (!MultiplexSpec.matches(glob, model) || versions.isEmpty()) {
                return;
            }
            if (!DeploymentSpec.isName(model)) { // a repository model with another name is not served
                report("repository model '" + model + "'",
                        "its name is not a deployment name (1-63 lower-case letters, digits, '.', '_' or '-')");
                return;
            }
            ModelKind served = servedKind.apply(model);
            List<String> left = new ArrayList<>(versions);
            while (!left.isEmpty()) { // newest first; past the newest only when it does not resolve
                String version = ModelRepository.newest(left);
                left.remove(version);
                try {
                    ModelVersion resolved = repository.resolve(model, version);
                    ModelKind kind = resolved.kind();
                    if (served != null && kind != served) {
                        throw new IllegalArgumentException("it is a " + kind.id() + " model, and '" + model
                                + "' is served as a " + served.id() + " model; a model keeps its kind (serve the "
                                + kind.id() + " model under a name of its own)");
                    }
                    found.put(model, new Candidate(version, size(resolved.directory())));
                    foundKinds.put(model, kind);
                    break;
                } catch (RuntimeException e) {
                    skipped.add(new NotServed(model, version, e.getMessage()));
                    report("version '" + version + "' of repository model '" + model + "'", e.getMessage());
                }
            }
        });
        kinds = Map.copyOf(foundKinds);
        skipped.sort(Comparator.comparing(NotServed::model).thenComparing(NotServed::version));
        notServed = List.copyOf(skipped);
        return found;
    }

    /** The kind {@code model} had at the last scan, or null when the last scan did not find it. */
    public ModelKind kind(String model) {
        return kinds.get(model);
    }

    /** The versions the last scan skipped, by model and version. */
    public List<NotServed> notServed() {
        return notServed;
    }

    /** Logs {@code problem} of {@code what} (a model, or one of its versions) once, not at every scan. */
    private void report(String what, String problem) {
        if (reported.add(what + ": " + problem)) {
            LOG.log(System.Logger.Level.WARNING, "deployment ''{0}'': {1} matches ''{2}'' but is not served: {3}",
                    deployment, what, glob, problem);
        }
    }

    /** The bytes of the files of a version folder: the estimate of the memory its model takes once loaded. */
    private static long size(Path directory) {
        try (Stream<Path> files = Files.walk(directory, 4)) {
            return files.mapToLong(file -> {
                try {
                    BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
                    return attributes.isRegularFile() ? attributes.size() : 0;
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
