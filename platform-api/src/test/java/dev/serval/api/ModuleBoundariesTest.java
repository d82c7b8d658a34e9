package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries docs/architecture.md draws, checked on the sources' imports: the edge sees only the engine's
 * façade packages; the engine knows nothing of Quarkus, Vert.x or CDI; only the model kinds' implementation packages
 * import DJL. A violation names the file and the import.
 */
class ModuleBoundariesTest {

    private static final Path API = Path.of("src/main/java");
    private static final Path CORE = Path.of("../platform-core/src/main/java");
    private static final Path SPI = Path.of("../platform-spi/src/main/java");
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)\\s*;", Pattern.MULTILINE);

    /** The engine packages platform-api may use; the others (routing, replica, admission, ...) are internals. */
    private static final Set<String> FACADE = Set.of("dev.serval.spec", "dev.serval.deployment", "dev.serval.model",
            "dev.serval.tensor", "dev.serval.error", "dev.serval.health", "dev.serval.controller",
            "dev.serval.autoscaling", "dev.serval.multiplex", "dev.serval.compose", "dev.serval.request");

    @Test
    void theEdgeUsesOnlyTheEnginesFacadePackages() {
        assertEquals(List.of(), violations(API, (file, imported) -> imported.startsWith("dev.serval.")
                && !imported.startsWith("dev.serval.api.") && !FACADE.contains(packageOf(imported))));
    }

    @Test
    void theEngineKnowsNothingOfQuarkusVertxOrCdi() {
        assertEquals(List.of(), violations(CORE, (file, imported) -> imported.startsWith("io.quarkus.")
                || imported.startsWith("io.vertx.") || imported.startsWith("jakarta.")
                || imported.startsWith("io.smallrye.")));
    }

    @Test
    void theHandlerSpiDependsOnNothingButTheJdk() {
        assertEquals(List.of(), violations(SPI, (file, imported) -> !imported.startsWith("java.")
                && !imported.startsWith("dev.serval.spi.")));
    }

    @Test
    void onlyTheModelKindsImplementationsImportDjl() {
        assertEquals(List.of(), violations(CORE, (file, imported) -> imported.startsWith("ai.djl.")
                && !(inPackage(file, "dev/serval/model/onnx") || inPackage(file, "dev/serval/model/text"))));
    }

    /** {@code file: import} for every import of a source under {@code root} that {@code forbidden} refuses. */
    private static List<String> violations(Path root, BiPredicate<Path, String> forbidden) {
        assertTrue(Files.isDirectory(root), root.toAbsolutePath() + " is missing: run from the module directory");
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Matcher imports = IMPORT.matcher(Files.readString(file));
                while (imports.find()) {
                    if (forbidden.test(root.relativize(file), imports.group(1))) {
                        found.add(root.relativize(file) + ": " + imports.group(1));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /** The package of an imported type ({@code a.b.C} or {@code a.b.C.member}): the segments before the first type. */
    private static String packageOf(String imported) {
        String[] parts = imported.split("\\.");
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
