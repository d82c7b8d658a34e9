package dev.serval.repository;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.model.Composite;
import dev.serval.model.Model;
import dev.serval.model.ModelDescriptor;
import dev.serval.model.ModelKind;
import dev.serval.spec.DeploymentSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The model repository: a directory with one folder per model and one subfolder per version, each holding a
 * {@code model.yaml} descriptor and the files it names:
 *
 * <pre>
 * repository/
 *   all-minilm-l6-v2/1/{model.yaml, model.onnx, tokenizer.json}
 *   noop/1/model.yaml
 * </pre>
 *
 * The repository finds folders and keeps reads inside it; what a descriptor's fields mean is read where the types
 * they become live ({@link ModelDescriptor#parse}). Nothing read through the repository lies outside it: model names
 * and versions are plain names (letters, digits, {@code . _ -}, never {@code ..}), descriptor paths are relative and
 * stay inside their version folder, and a symbolic link that leads out of the repository is refused. It loads the
 * model a deployment's spec names ({@link #load}), as Triton's repository manager does, with the deployments a
 * composite model may call. Thread-safe (it keeps no state but its root and its callees, both fixed, and reads the
 * file system each time).
 */
public final class ModelRepository {

    /** The descriptor's file name in each version folder. */
    public static final String DESCRIPTOR = "model.yaml";

    private static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** What a composite model of a repository created without callees finds: no deployment. */
    private static final Callees NO_CALLEES = new Callees() {
        private final MeterRegistry meters = new SimpleMeterRegistry();

        @Override
        public Deployment<?, ?> find(String name) {
            return null;
        }

        @Override
        public MeterRegistry meters() {
            return meters;
        }
    };

    private final Path root;
    /** The deployments a composite model loaded by {@link #load} calls. */
    private final Callees callees;

    /** @param root the repository directory; created if missing; its composite models find no deployment to call */
    public ModelRepository(Path root) {
        this(root, NO_CALLEES);
    }

    private ModelRepository(Path root, Callees callees) {
        this.callees = callees;
        try {
            Files.createDirectories(root);
            this.root = root.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the model repository " + root.toAbsolutePath(), e);
        }
    }

    /**
     * The repository at {@code root} (created if missing) holding the models Serval ships ({@link BundledModels}: a
     * version already there keeps its descriptor), as a server starts it.
     *
     * @param classLoader where the shipped models' resources are
     * @param deployments the deployments a composite model it loads may call, by name (null when none has that name);
     *                    looked up on every call, so that a callee replaced, deleted or created later is found as it
     *                    is then; any thread
     * @param meters      where those calls' meters go ({@code serval_call_seconds})
     * @throws IllegalArgumentException when the shipped models are not on the class path
     */
    public static ModelRepository withBundledModels(Path root, ClassLoader classLoader,
            Function<String, Deployment<?, ?>> deployments, MeterRegistry meters) {
        ModelRepository repository = new ModelRepository(root, new Callees() {
            @Override
            public Deployment<?, ?> find(String name) {
                return deployments.apply(name);
            }

            @Override
            public MeterRegistry meters() {
                return meters;
            }
        });
        BundledModels.install(repository, classLoader);
        return repository;
    }

    /**
     * Loads the model version {@code spec} names ({@code model}, {@code version}) for its deployment, with its load
     * options ({@link ModelVersion#load}); blocks, so it runs on a launcher thread. Reads only what makes the key
     * under which replicas share a loaded model: the spec may be older than the deployment's current one.
     *
     * @throws IllegalArgumentException as {@link #resolve}, or when an option does not fit the model
     * @throws IOException              when a file is unreadable or the model fails its first inference
     */
    public Model<?, ?> load(DeploymentSpec spec) throws IOException {
        return resolve(spec.model().name(), spec.version()).load(spec.name(), spec.loadOptions(), callees);
    }

    public Path root() {
        return root;
    }

    /**
     * Finds {@code name}/{@code version} and reads its descriptor.
     *
     * @throws IllegalArgumentException with a message naming the model, version and problem: a name that is not a
     *                                  plain name, a missing model or version, a bad descriptor, a path leaving the
     *                                  repository, a missing file
     */
    public ModelVersion resolve(String name, String version) {
        checkPlain("model name", name);
        checkPlain("version", version);
        Path modelDir = inside(root.resolve(name), "model '" + name + "'");
        if (!Files.isDirectory(modelDir)) {
            throw new IllegalArgumentException("model '" + name + "' is not in the repository " + root
                    + (models().isEmpty() ? "" : "; it holds " + String.join(", ", models().keySet())));
        }
        Path versionDir = inside(modelDir.resolve(version), "model '" + name + "' version '" + version + "'");
        if (!Files.isDirectory(versionDir)) {
            throw new IllegalArgumentException("model '" + name + "' has no version '" + version + "' in the repository;"
                    + " it has " + versions(modelDir));
        }
        String where = "model '" + name + "' version '" + version + "': " + DESCRIPTOR;
        ModelDescriptor descriptor = readDescriptor(versionDir, where);
        if (descriptor.composite() instanceof Composite.JavaHandler handler) {
            requireFile(versionDir, handler.jar(), where, "jar");
        } else if (descriptor.kind() != ModelKind.NOOP && descriptor.kind() != ModelKind.PIPELINE) {
            requireFile(versionDir, descriptor.file(), where, "file");
        }
        if (descriptor.kind().text()) {
            requireFile(versionDir, descriptor.tokenizer(), where, "tokenizer");
        }
        if (descriptor.kind() == ModelKind.TEXT_CLASSIFICATION && descriptor.labels().isEmpty()) {
            if (!Files.isRegularFile(versionDir.resolve(descriptor.config()))) {
                throw new IllegalArgumentException(where + ": a text-classification model needs 'labels', the names "
                        + "of its logits in order, or a " + descriptor.config() + " whose id2label names them");
            }
        }
        return new ModelVersion(name, version, versionDir, descriptor);
    }

    /** The newest of {@code versions} (not empty): numeric versions by number, above any other, which sort by name. */
    public static String newest(List<String> versions) {
        return versions.stream().max(Comparator.comparing((String v) -> v.matches("\\d{1,18}")
                ? Long.parseLong(v) : -1).thenComparing(Comparator.naturalOrder())).orElseThrow();
    }

    /** Every model and its versions, sorted by name (the OIP repository index). */
    public Map<String, List<String>> models() {
        Map<String, List<String>> models = new LinkedHashMap<>();
        try (Stream<Path> entries = Files.list(root)) {
            entries.filter(Files::isDirectory).filter(this::staysInside).map(p -> p.getFileName().toString())
                    .filter(n -> PLAIN_NAME.matcher(n).matches()).sorted()
                    .forEach(n -> models.put(n, versions(root.resolve(n))));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the model repository " + root, e);
        }
        return models;
    }

    private List<String> versions(Path modelDir) {
        try (Stream<Path> entries = Files.list(modelDir)) {
            return entries.filter(p -> Files.isRegularFile(p.resolve(DESCRIPTOR))).filter(this::staysInside)
                    .map(p -> p.getFileName().toString()).filter(n -> PLAIN_NAME.matcher(n).matches()).sorted()
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /**
     * Refuses a model name or version that is not a plain folder name.
     *
     * @throws IllegalArgumentException naming {@code what} and the rule
     */
    public static void checkPlain(String what, String value) {
        if (value == null || !PLAIN_NAME.matcher(value).matches() || value.contains("..")) {
            throw new IllegalArgumentException(what + " '" + value + "' must be a plain name: letters, digits, "
                    + "'.', '_' and '-', starting with a letter or digit, without '..' (it names a folder of the "
                    + "repository)");
        }
    }

    /** {@code path} if it exists inside the repository (after following links), or if it does not exist. */
    private Path inside(Path path, String what) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return path;
        }
        try {
            Path real = path.toRealPath();
            if (!real.startsWith(root)) {
                throw new IllegalArgumentException(what + " leads out of the repository (a link to " + real
                        + "); Serval reads models only inside " + root);
            }
            return real;
        } catch (IOException e) {
            throw new IllegalArgumentException(what + " cannot be read: " + e.getMessage());
        }
    }

    /** Whether {@code path}, links followed, lies inside the repository (what {@link #resolve} would accept). */
    private boolean staysInside(Path path) {
        try {
            return path.toRealPath().startsWith(root);
        } catch (IOException e) {
            return false;
        }
    }

    private void requireFile(Path versionDir, String relative, String where, String field) {
        Path file = inside(versionDir.resolve(relative), where + " field '" + field + "' (" + relative + ")");
        if (!file.startsWith(versionDir)) {
            throw new IllegalArgumentException(where + ": field '" + field + "' (" + relative
                    + ") leads out of the model's folder");
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException(where + ": field '" + field + "': " + relative + " does not exist in "
                    + versionDir);
        }
    }

    private static ModelDescriptor readDescriptor(Path versionDir, String where) {
        JsonNode node;
        try {
            node = YAML.readTree(versionDir.resolve(DESCRIPTOR).toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException(where + " cannot be read: "
                    + (e.getMessage() == null ? e : e.getMessage().lines().findFirst().orElse("")));
        }
        return ModelDescriptor.parse(node, where, DeploymentSpec::isName);
    }

    /**
     * Writes a model version's descriptor and files when it is not there yet (the bundled models at startup).
     *
     * @param files file name to content writer, each written atomically
     */
    public void install(String name, String version, String descriptorYaml, Map<String, FileSource> files) {
        checkPlain("model name", name);
        checkPlain("version", version);
        Path dir = root.resolve(name).resolve(version);
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, FileSource> file : files.entrySet()) {
                file.getValue().writeTo(dir, file.getKey());
            }
            Path descriptor = dir.resolve(DESCRIPTOR);
            if (!Files.isRegularFile(descriptor)) {
                Path partial = Files.createTempFile(dir, DESCRIPTOR, ".partial");
                Files.writeString(partial, descriptorYaml);
                Files.move(partial, descriptor, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install model '" + name + "' version '" + version + "' into "
                    + dir, e);
        }
    }

    /** Writes one file into a version folder (if not already there). */
    @FunctionalInterface
    public interface FileSource {
        void writeTo(Path directory, String fileName) throws IOException;
    }
}
