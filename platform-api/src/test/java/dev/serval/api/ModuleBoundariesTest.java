package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries docs/architecture.md draws, checked on the sources: the edge sees only the engine's façade
 * packages; the engine knows nothing of Quarkus, Vert.x or CDI; only the model kinds' implementation packages use DJL;
 * the engine's packages form no cycle but the model factory ring, the edge's none but the one named below. A use is an
 * import or a fully qualified name in code ({@code dev.serval.compose.Composite} written out is an import in
 * disguise); comments and string literals are not code. A violation names the file and the name it uses.
 */
class ModuleBoundariesTest {

    private static final Path API = Path.of("src/main/java");
    private static final Path CORE = Path.of("../platform-core/src/main/java");
    private static final Path SPI = Path.of("../platform-spi/src/main/java");
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern IMPORT =
            Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+?)(?:\\.\\*)?\\s*;", Pattern.MULTILINE);
    /** A qualified type name in code: lower-case segments under a well-known root, then a type. */
    private static final Pattern QUALIFIED = Pattern.compile(
            "(?<![\\w.])((?:java|javax|jdk|sun|com|org|net|io|ai|dev|jakarta)\\.(?:[a-z_][a-z0-9_]*\\.)*[A-Z]\\w*)");
    /** What is not code: text blocks, string and character literals, comments (one alternation, so none hides another). */
    private static final Pattern NOT_CODE = Pattern.compile(
            "\"\"\"[\\s\\S]*?\"\"\"|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])+'|//[^\\n]*|/\\*[\\s\\S]*?\\*/");

    /** The engine packages platform-api may use; the others (routing, replica, admission, ...) are internals. */
    private static final Set<String> FACADE = Set.of("dev.serval.spec", "dev.serval.deployment", "dev.serval.model",
            "dev.serval.tensor", "dev.serval.error", "dev.serval.request",
            "dev.serval.repository");

    /**
     * The one cycle the engine may have: the model catalog ({@code model.ModelCatalog}) creates the kinds'
     * implementations below it, which implement the model SPI of {@code model} (a factory and its products). Any other
     * cycle means a lower package reaches up; move the concept down or hand it in from above (as
     * {@code model.CompositeLoader} does for the composite kinds).
     */
    private static final Set<String> MODEL_FACTORY_RING =
            Set.of("dev.serval.model", "dev.serval.model.onnx", "dev.serval.model.text");

    @Test
    void theEdgeUsesOnlyTheEnginesFacadePackages() {
        assertEquals(List.of(), violations(API, (file, used) -> used.startsWith("dev.serval.")
                && !used.startsWith("dev.serval.api.") && !FACADE.contains(packageOf(used))));
    }

    /**
     * The engine types the edge may name, and the packages they come from: the edge knows the engine's façade, not
     * its rooms. A nested type counts as its outer type; a wildcard import of an engine package is refused (it would
     * hide what it names).
     */
    private static final int MAX_ENGINE_TYPES = 30;
    private static final int MAX_ENGINE_PACKAGES = 7;

    @Test
    void theEdgeNamesAtMostThirtyEngineTypesFromAtMostSevenPackages() {
        Set<String> types = new TreeSet<>();
        List<String> wildcards = new ArrayList<>();
        sources(API).forEach((file, source) -> {
            for (String used : uses(source)) {
                if (used.startsWith("dev.serval.") && !used.startsWith("dev.serval.api.")
                        && !used.startsWith("dev.serval.spi.")) {
                    String pkg = packageOf(used);
                    if (pkg.equals(used)) {
                        wildcards.add(file + ": " + used + ".*");
                    } else {
                        types.add(pkg + "." + used.substring(pkg.length() + 1).split("\\.")[0]);
                    }
                }
            }
        });
        assertEquals(List.of(), wildcards, "name the engine's types one by one");
        Set<String> packages = new TreeSet<>();
        types.forEach(type -> packages.add(packageOf(type)));
        assertTrue(types.size() <= MAX_ENGINE_TYPES && packages.size() <= MAX_ENGINE_PACKAGES, types.size()
                + " engine types from " + packages.size() + " packages (at most " + MAX_ENGINE_TYPES + " from "
                + MAX_ENGINE_PACKAGES + "): " + types);
    }

    @Test
    void theEngineKnowsNothingOfQuarkusVertxOrCdi() {
        assertEquals(List.of(), violations(CORE, (file, used) -> used.startsWith("io.quarkus.")
                || used.startsWith("io.vertx.") || used.startsWith("jakarta.")
                || used.startsWith("io.smallrye.")));
    }

    @Test
    void theHandlerSpiDependsOnNothingButTheJdk() {
        assertEquals(List.of(), violations(SPI, (file, used) -> !used.startsWith("java.")
                && !used.startsWith("dev.serval.spi.")));
    }

    @Test
    void onlyTheModelKindsImplementationsUseDjl() {
        assertEquals(List.of(), violations(CORE, (file, used) -> used.startsWith("ai.djl.")
                && !(inPackage(file, "dev/serval/model/onnx") || inPackage(file, "dev/serval/model/text"))));
    }

    @Test
    void theEngineHasNoPackageCycleButTheModelFactoryRing() {
        assertEquals(List.of(), cyclesOutside(CORE, MODEL_FACTORY_RING));
    }

    @Test
    void theEdgeHasNoPackageCycle() {
        assertEquals(List.of(), cyclesOutside(API, Set.of()));
    }

    /** A main file's lines past which it is one room holding several machines. */
    private static final int MAX_LINES = 400;

    /**
     * The main files allowed past {@link #MAX_LINES}, each with its reason and a ceiling it may not grow past: a file
     * leaves this list once it is split, and a new one joins it only with a reason.
     */
    private static final Map<String, Oversized> OVERSIZED = Map.of(
            "dev/serval/replica/PredictorPool.java", new Oversized(446,
                    "the worker loop and its shutdown; its sub-machines are already types (InputQueue, BatchRunner,"
                            + " IdleCores, PoolRequest) and a third of it is the design comment naming every field's"
                            + " writers and readers"),
            "dev/serval/deployment/Deployment.java", new Oversized(410,
                    "the edge's one face of a served model: its request entries (infer, embed, embedTokens, submit),"
                            + " its condition and its changes; its sub-machines are already types (Intake, AtZero,"
                            + " ServingSignal, DeploymentScaling)"),
            "dev/serval/api/http/InferenceExchange.java", new Oversized(416,
                    "REST's steps up to the inference call, with the body reading they hold (its stall and trickle"
                            + " deadline reads and writes the exchange's state)"),
            "dev/serval/api/http/OipRequestDecoder.java", new Oversized(422,
                    "one streaming JSON decoder of the OIP request: a state machine over the parser's tokens"));

    /** Why a file may be long, and how long. */
    private record Oversized(int ceiling, String reason) {}

    @Test
    void noMainFileIsLongerThanItsRoomWithoutANamedReason() {
        List<String> found = new ArrayList<>();
        for (Path root : List.of(API, CORE)) {
            sources(root).forEach((file, source) -> {
                String name = file.toString().replace('\\', '/');
                long lines = source.lines().count();
                Oversized allowed = OVERSIZED.get(name);
                if (allowed == null ? lines > MAX_LINES : lines > allowed.ceiling()) {
                    found.add(name + ": " + lines + " lines (at most " + (allowed == null ? MAX_LINES
                            : allowed.ceiling() + ", " + allowed.reason()) + ")");
                }
            });
        }
        assertEquals(List.of(), found, "split these files, one machine per type");
    }

    @Test
    void aFullyQualifiedNameInCodeIsAUseButOneInACommentOrStringIsNot() {
        String source = """
                package dev.serval.model;

                import dev.serval.tensor.Tensors;
                import static dev.serval.error.InvalidInput.of;

                /** Links {@link dev.serval.routing.Router}. */
                class Sample {
                    // dev.serval.replica.Replica
                    dev.serval.compose.Composite composite;
                    String text = "dev.serval.admission.RetryAfter // not code";
                    char quote = '"';
                    Object handler = new dev.serval.spi.Handler.Nested(java.util.List.of());
                }
                """;

        assertEquals(List.of("dev.serval.tensor.Tensors", "dev.serval.error.InvalidInput.of",
                "dev.serval.compose.Composite", "dev.serval.spi.Handler", "java.util.List"), uses(source));
        assertEquals("dev.serval.spi", packageOf("dev.serval.spi.Handler.Nested"));
    }

    /** {@code file: name} for every use in a source under {@code root} that {@code forbidden} refuses. */
    private static List<String> violations(Path root, BiPredicate<Path, String> forbidden) {
        List<String> found = new ArrayList<>();
        sources(root).forEach((file, source) -> {
            for (String used : uses(source)) {
                if (forbidden.test(file, used)) {
                    found.add(file + ": " + used);
                }
            }
        });
        return found;
    }

    /**
     * The package cycles among the sources under {@code root} that are not within {@code allowed}: each as its
     * packages and, for each of its edges, the files that make it ({@code a -> b (A.java, B.java)}).
     */
    private static List<String> cyclesOutside(Path root, Set<String> allowed) {
        Map<String, Map<String, Set<String>>> edges = new TreeMap<>(); // package -> package it uses -> files
        sources(root).forEach((file, source) -> {
            Matcher declared = PACKAGE.matcher(source);
            if (!declared.find()) {
                return;
            }
            String from = declared.group(1);
            Map<String, Set<String>> out = edges.computeIfAbsent(from, ignored -> new TreeMap<>());
            for (String used : uses(source)) {
                String to = packageOf(used);
                if (to.startsWith("dev.serval.") && !to.equals(from)) {
                    out.computeIfAbsent(to, ignored -> new TreeSet<>()).add(file.getFileName().toString());
                }
            }
        });
        List<String> cycles = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (String start : edges.keySet()) {
            if (seen.contains(start)) {
                continue;
            }
            Set<String> component = new TreeSet<>();
            for (String other : reachable(edges, start)) {
                if (reachable(edges, other).contains(start)) {
                    component.add(other);
                }
            }
            seen.addAll(component);
            if (component.size() > 1 && !allowed.containsAll(component)) {
                List<String> within = new ArrayList<>();
                for (String from : component) {
                    edges.get(from).forEach((to, files) -> {
                        if (component.contains(to)) {
                            within.add(from + " -> " + to + " " + files);
                        }
                    });
                }
                cycles.add(component + ": " + within);
            }
        }
        return cycles;
    }

    /** The packages reachable from {@code start} along {@code edges}, {@code start} itself included. */
    private static Set<String> reachable(Map<String, Map<String, Set<String>>> edges, String start) {
        Set<String> reached = new TreeSet<>(Set.of(start));
        List<String> todo = new ArrayList<>(List.of(start));
        while (!todo.isEmpty()) {
            for (String next : edges.getOrDefault(todo.removeLast(), Map.of()).keySet()) {
                if (reached.add(next)) {
                    todo.add(next);
                }
            }
        }
        return reached;
    }

    /** Every {@code .java} file under {@code root} (relative to it) with its text. */
    private static Map<Path, String> sources(Path root) {
        assertTrue(Files.isDirectory(root), root.toAbsolutePath() + " is missing: run from the module directory");
        Map<Path, String> found = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                found.put(root.relativize(file), Files.readString(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /** The names a source uses: its imports, then the qualified names in its code, in order of appearance. */
    static List<String> uses(String source) {
        String code = NOT_CODE.matcher(source).replaceAll(" ");
        List<String> used = new ArrayList<>();
        Matcher imports = IMPORT.matcher(code);
        while (imports.find()) {
            used.add(imports.group(1));
        }
        String body = PACKAGE.matcher(IMPORT.matcher(code).replaceAll("")).replaceAll("");
        Matcher qualified = QUALIFIED.matcher(body);
        while (qualified.find()) {
            used.add(qualified.group(1));
        }
        return used;
    }

    /**
     * The package of a used name ({@code a.b.C}, {@code a.b.C.member}, or a package {@code a.b} of a wildcard
     * import): the segments before the first type.
     */
    private static String packageOf(String used) {
        String[] parts = used.split("\\.");
        StringBuilder pkg = new StringBuilder();
        for (String part : parts) {
            if (Character.isUpperCase(part.charAt(0))) {
                break;
            }
            pkg.append(pkg.isEmpty() ? "" : ".").append(part);
        }
        return pkg.toString();
    }

    private static boolean inPackage(Path file, String pkg) {
        return file.getParent() != null && file.getParent().toString().replace('\\', '/').equals(pkg);
    }
}
