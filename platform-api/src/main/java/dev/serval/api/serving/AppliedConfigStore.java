package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;

/**
 * The last applied config, kept in the state directory ({@code serval.state-dir}) as {@value #FILE}, so that a
 * restart resumes what the management API set. Without a state directory it keeps nothing. Writes are atomic: the
 * file holds the previous config or the new one, never part of one (a temporary file in the same directory, then an
 * atomic rename). Not thread-safe: its caller serialises writes (changes to deployments are serialised anyway).
 */
final class AppliedConfigStore {

    /** The state directory's file. */
    static final String FILE = "applied-config.yaml";

    private final Optional<Path> dir;

    /** @param dir the state directory, created on the first write; empty for none */
    AppliedConfigStore(Optional<Path> dir) {
        this.dir = dir;
    }

    /** The file of the last applied config, when there is one. */
    Optional<Path> file() {
        return dir.map(d -> d.resolve(FILE)).filter(Files::isRegularFile);
    }

    /**
     * Replaces the stored config with {@code configs}, atomically; does nothing without a state directory.
     *
     * @throws UncheckedIOException when the directory or the file cannot be written; the previous file is unchanged
     */
    void write(List<DeploymentSpec> configs) {
        if (dir.isEmpty()) {
            return;
        }
        Path partial = null;
        try {
            Files.createDirectories(dir.get());
            partial = Files.createTempFile(dir.get(), FILE, ".partial");
            Files.writeString(partial, ConfigParser.toYaml(configs));
            Files.move(partial, dir.get().resolve(FILE), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            deleteQuietly(partial);
            throw new UncheckedIOException("cannot write the applied config into " + dir.get(), e);
        }
    }

    private static void deleteQuietly(Path partial) {
        if (partial == null) {
            return;
        }
        try {
            Files.deleteIfExists(partial);
        } catch (IOException ignored) {
            // the write failed already; a leftover .partial file is harmless and reported by that failure
        }
    }
}
