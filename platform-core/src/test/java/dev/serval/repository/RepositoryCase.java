package dev.serval.repository;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model repository in a temporary folder, with a folder next to it (outside it), for the tests of
 * {@link ModelRepository}: each writes the versions it needs and reads them back or expects a refusal.
 */
abstract class RepositoryCase {


    static final String EMBEDDING = """
            kind: text-embedding
            max_length: 128
            engine:
              interOpNumThreads: 1
              optLevel: ALL_OPT
            description: a test encoder
            """;

    @TempDir
    Path temp;

    /** The repository root, inside {@link #temp}. */
    Path root;

    /** A folder next to the repository, outside it. */
    Path outside;

    ModelRepository repository;

    @BeforeEach
    void createRepository() throws IOException {
        root = temp.resolve("repository");
        outside = Files.createDirectories(temp.resolve("outside"));
        repository = new ModelRepository(root);
    }

    /** Writes {@code <root>/<model>/<version>/model.yaml} with {@code descriptor} and the named files. */
    Path version(String model, String version, String descriptor, String... files) throws IOException {
        Path dir = Files.createDirectories(root.resolve(model).resolve(version));
        Files.writeString(dir.resolve(ModelRepository.DESCRIPTOR), descriptor);
        for (String file : files) {
            Files.createDirectories(dir.resolve(file).getParent());
            Files.writeString(dir.resolve(file), "content of " + file);
        }
        return dir;
    }

    IllegalArgumentException refused(String model, String version) {
        return assertThrows(IllegalArgumentException.class, () -> repository.resolve(model, version));
    }

    static void assertMessage(IllegalArgumentException e, String... parts) {
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), () -> "expected <" + part + "> in: " + e.getMessage());
        }
    }

    static final String WHERE = "model 'm' version '1': model.yaml: ";

}
