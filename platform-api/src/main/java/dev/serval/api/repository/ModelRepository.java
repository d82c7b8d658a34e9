package dev.serval.api.repository;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.serval.model.Composite;
import dev.serval.model.ModelDescriptor;
import dev.serval.model.ModelKind;
import dev.serval.model.PipelineStep;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Nothing read through the repository lies outside it: model names and versions are plain names (letters, digits,
 * {@code . _ -}, never {@code ..}), descriptor paths are relative and stay inside their version folder, and a
 * symbolic link that leads out of the repository is refused. Thread-safe (it reads the file system each time).
 */
public final class ModelRepository {

    /** The descriptor's file name in each version folder. */
    public static final String DESCRIPTOR = "model.yaml";

    private static final Pattern PLAIN_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Set<String> DESCRIPTOR_FIELDS =
            Set.of("kind", "file", "tokenizer", "max_length", "labels", "output", "engine", "description", "steps",
                    "jar", "class");
    /** The most steps a pipeline may have. */
    public static final int MAX_STEPS = 16;
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private final Path root;

    /** @param root the repository directory; created if missing */
    public ModelRepository(Path root) {
        try {
            Files.createDirectories(root);
            this.root = root.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the model repository " + root.toAbsolutePath(), e);
        }
    }

    public Path root() {
        return root;
    }

    /** One model version found in the repository, its folder and its descriptor. */
    public record ModelVersion(String name, String version, Path directory, ModelDescriptor descriptor) {

        /** The descriptor's {@code file} (a java model's {@code jar}), inside the version folder. */
        public Path file() {
            return directory.resolve(descriptor.composite() instanceof Composite.JavaHandler handler
                    ? handler.jar() : descriptor.file());
        }

        /** The descriptor's {@code tokenizer}, inside the version folder. */
        public Path tokenizer() {
            return directory.resolve(descriptor.tokenizer());
        }
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
        return new ModelVersion(name, version, versionDir, descriptor);
    }

    /** The newest of {@code versions} (not empty): numeric versions by number, above any other, which sort by name. */
    public static String newest(List<String> versions) {
        return versions.stream().max(java.util.Comparator.comparing((String v) -> v.matches("\\d{1,18}")
                ? Long.parseLong(v) : -1).thenComparing(java.util.Comparator.naturalOrder())).orElseThrow();
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
        return parseDescriptor(node, where);
    }

    /** Checks and reads a descriptor; {@code where} names it in errors. */
    static ModelDescriptor parseDescriptor(JsonNode node, String where) {
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping with at least 'kind'");
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!DESCRIPTOR_FIELDS.contains(field)) {
                throw new IllegalArgumentException(where + ": unknown field '" + field + "'; known fields: "
                        + DESCRIPTOR_FIELDS.stream().sorted().toList());
            }
        }
        JsonNode kindNode = node.get("kind");
        ModelKind kind = kindNode == null || !kindNode.isTextual() ? null : ModelKind.of(kindNode.textValue()).orElse(null);
        if (kind == null) {
            throw new IllegalArgumentException(where + ": field 'kind' must be one of " + ModelKind.ids() + ", not "
                    + kindNode);
        }
        String file = relativePath(node, "file", "model.onnx", where);
        String tokenizer = relativePath(node, "tokenizer", "tokenizer.json", where);
        JsonNode maxLengthNode = node.get("max_length");
        int maxLength = 256;
        if (maxLengthNode != null) {
            if (!maxLengthNode.canConvertToInt() || !maxLengthNode.isIntegralNumber() || maxLengthNode.intValue() < 2) {
                throw new IllegalArgumentException(where + ": field 'max_length' must be a whole number >= 2, not "
                        + maxLengthNode);
            }
            maxLength = maxLengthNode.intValue();
        }
        List<String> labels = new ArrayList<>();
        JsonNode labelsNode = node.get("labels");
        if (labelsNode != null) {
            if (!labelsNode.isArray()) {
                throw new IllegalArgumentException(where + ": field 'labels' must be a list of names");
            }
            labelsNode.forEach(label -> {
                if (!label.isTextual() || label.textValue().isBlank()) {
                    throw new IllegalArgumentException(where + ": field 'labels' must hold non-empty strings, not "
                            + label);
                }
                labels.add(label.textValue());
            });
        }
        if (kind == ModelKind.TEXT_CLASSIFICATION && labels.size() < 2) {
            throw new IllegalArgumentException(where + ": a text-classification model needs 'labels', at least two "
                    + "names in the order of its logits");
        }
        String output = "";
        JsonNode outputNode = node.get("output");
        if (outputNode != null) {
            if (!kind.text()) {
                throw new IllegalArgumentException(where + ": field 'output' names the graph output a text model reads;"
                        + " a " + kind.id() + " model " + (kind == ModelKind.TENSOR
                        ? "answers with every graph output under its own name" : "runs no graph"));
            }
            if (!outputNode.isTextual() || outputNode.textValue().isBlank()) {
                throw new IllegalArgumentException(where + ": field 'output' must be the name of a graph output, not "
                        + outputNode);
            }
            output = outputNode.textValue();
        }
        Map<String, String> engine = engine(node.get("engine"), kind, where);
        Composite composite = composite(node, kind, where);
        JsonNode description = node.get("description");
        try {
            return new ModelDescriptor(kind, file, tokenizer, maxLength, labels, output, engine,
                    description == null ? "" : description.asText(), composite);
        } catch (IllegalArgumentException e) {
            // every other field was checked above with its own message: what the descriptor refuses is an engine option
            throw new IllegalArgumentException(where + ": field 'engine': " + e.getMessage(), e);
        }
    }

    /**
     * A pipeline's {@code steps} or a java model's {@code jar} and {@code class}, checked; null for the other kinds,
     * which must have none of them.
     */
    private static Composite composite(JsonNode node, ModelKind kind, String where) {
        for (String field : List.of("steps", "jar", "class")) {
            boolean own = kind == ModelKind.PIPELINE ? field.equals("steps") : kind == ModelKind.JAVA && !field.equals("steps");
            if (node.has(field) && !own) {
                throw new IllegalArgumentException(where + ": field '" + field + "' is for " + (field.equals("steps")
                        ? "a pipeline" : "a java model") + ", not a " + kind.id() + " model");
            }
        }
        if (kind == ModelKind.JAVA) {
            if (node.has("file") || node.has("tokenizer")) {
                throw new IllegalArgumentException(where + ": a java model names its jar with 'jar', not 'file'");
            }
            String jar = relativePath(node, "jar", null, where);
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
            parsed.add(step(steps.get(i), i, where + ": steps[" + i + "]"));
        }
        return new Composite.Pipeline(parsed);
    }

    private static final Pattern JAVA_CLASS =
            Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*){0,63}");

    private static PipelineStep step(JsonNode step, int index, String where) {
        if (step == null || !step.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping such as 'deployment: echo'");
        }
        for (Iterator<String> names = step.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!STEP_FIELDS.contains(field)) {
                throw new IllegalArgumentException(where + ": unknown field '" + field + "'; known fields: "
                        + STEP_FIELDS);
            }
        }
        if (step.has("deployment") == step.has("route")) {
            throw new IllegalArgumentException(where + " needs either 'deployment' (the deployment it calls) or "
                    + "'route' (how it chooses one)");
        }
        String deployment = step.has("deployment") ? deploymentName(step.get("deployment"), where + ": 'deployment'")
                : null;
        PipelineStep.Route route = step.has("route") ? route(step.get("route"), index,
                where + ": 'route'") : null;
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
        Map<String, String> inputs = new LinkedHashMap<>();
        JsonNode mapping = step.get("inputs");
        if (mapping != null) {
            if (index == 0) {
                throw new IllegalArgumentException(where + ": the first step takes the request's tensors as they are; "
                        + "'inputs' maps a previous step's outputs");
            }
            if (!mapping.isObject() || mapping.size() > 64) {
                throw new IllegalArgumentException(where + ": 'inputs' must be a mapping of at most 64 entries "
                        + "'previous output: this step's input'");
            }
            java.util.Set<String> targets = new java.util.HashSet<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = mapping.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                JsonNode to = entry.getValue();
                if (!to.isTextual() || to.textValue().isEmpty() || to.textValue().length() > 256
                        || entry.getKey().isEmpty() || entry.getKey().length() > 256) {
                    throw new IllegalArgumentException(where + ": 'inputs' maps output names to input names (1 to 256 "
                            + "characters each), not '" + entry.getKey() + "': " + to);
                }
                if (!targets.add(to.textValue())) {
                    throw new IllegalArgumentException(where + ": 'inputs' maps two outputs to '" + to.textValue()
                            + "'");
                }
                inputs.put(entry.getKey(), to.textValue());
            }
        }
        return new PipelineStep(deployment, route, fromRequest, inputs);
    }

    private static final List<String> STEP_FIELDS = List.of("deployment", "route", "from", "inputs");

    private static String deploymentName(JsonNode node, String where) {
        if (node == null || !node.isTextual() || !DeploymentSpec.isName(node.textValue())) {
            throw new IllegalArgumentException(where + " must name a deployment, not " + node);
        }
        return node.textValue();
    }

    /** A step's {@code route}: {@code on} (an output name), {@code cases} (value: deployment), optional {@code default}. */
    private static PipelineStep.Route route(JsonNode route, int index, String where) {
        if (index == 0) {
            throw new IllegalArgumentException(where + ": the first step cannot route; a route chooses by an output of "
                    + "the step before it");
        }
        if (route == null || !route.isObject()) {
            throw new IllegalArgumentException(where + " must be a mapping with 'on', 'cases' and optionally 'default'");
        }
        for (Iterator<String> names = route.fieldNames(); names.hasNext(); ) {
            String field = names.next();
            if (!List.of("on", "cases", "default").contains(field)) {
                throw new IllegalArgumentException(where + ": unknown field '" + field + "'; known fields: "
                        + "[on, cases, default]");
            }
        }
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
            byValue.put(entry.getKey(), deploymentName(entry.getValue(), where + ": case '" + entry.getKey() + "'"));
        }
        String otherwise = route.has("default") ? deploymentName(route.get("default"), where + ": 'default'") : null;
        return new PipelineStep.Route(on.textValue(), byValue, otherwise);
    }

    /**
     * The descriptor's {@code engine} mapping as option name to value, each a single value; whether ONNX Runtime
     * takes them is the descriptor's check.
     */
    private static Map<String, String> engine(JsonNode engineNode, ModelKind kind, String where) {
        if (engineNode == null) {
            return Map.of();
        }
        if (!engineNode.isObject()) {
            throw new IllegalArgumentException(where + ": field 'engine' must be a mapping of ONNX Runtime options");
        }
        if (kind == ModelKind.NOOP && !engineNode.isEmpty()) {
            throw new IllegalArgumentException(where + ": field 'engine' sets ONNX Runtime options; a noop model runs "
                    + "no graph");
        }
        Map<String, String> engine = new LinkedHashMap<>();
        engineNode.fields().forEachRemaining(option -> {
            if (!option.getValue().isValueNode()) {
                throw new IllegalArgumentException(where + ": engine option '" + option.getKey()
                        + "' must be a single value");
            }
            if (option.getValue().isNull()) {
                throw new IllegalArgumentException(where + ": engine option '" + option.getKey() + "' has no value");
            }
            engine.put(option.getKey(), option.getValue().asText());
        });
        return engine;
    }

    private static String relativePath(JsonNode node, String field, String fallback, String where) {
        JsonNode value = node.get(field);
        if (value == null) {
            return fallback;
        }
        if (!value.isTextual() || value.textValue().isBlank()) {
            throw new IllegalArgumentException(where + ": field '" + field + "' must be a file name, not " + value);
        }
        String path = value.textValue();
        Path parsed;
        try {
            parsed = Path.of(path);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(where + ": field '" + field + "' (" + path + ") is not a valid path");
        }
        if (parsed.isAbsolute() || path.startsWith("/") || path.startsWith("\\")) {
            throw new IllegalArgumentException(where + ": field '" + field + "' (" + path
                    + ") must be relative to the model's folder, not absolute");
        }
        for (Path part : parsed) {
            if (part.toString().equals("..")) {
                throw new IllegalArgumentException(where + ": field '" + field + "' (" + path
                        + ") must not contain '..': it would leave the model's folder");
            }
        }
        return path;
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
                Files.move(partial, descriptor, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
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
