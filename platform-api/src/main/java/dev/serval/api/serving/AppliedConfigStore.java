package dev.serval.api.serving;

import dev.serval.api.config.ConfigParser;
import dev.serval.spec.DeploymentSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;

/**
 * The last applied config, kept in the state directory ({@code serval.state-dir}) as {@value #FILE}, so that a
 * restart resumes what the management API set. Without a state directory it keeps nothing. Writes are atomic and
 * durable: the file holds the previous config or the new one, never part of one (a temporary file in the same
 * directory, synced to disk, then an atomic rename, then the directory synced, so that a power cut keeps one or the
 * other); temporary files a killed write left behind are removed at the next start ({@link #removeLeftovers}).
 * Not thread-safe: its caller serialises writes (changes to deployments are serialised anyway).
 */
final class AppliedConfigStore {

    /** The state directory's file. */
    static final String FILE = "applied-config.yaml";
    /** The suffix of a write's temporary file, beside {@link #FILE}. */
    private static final String PARTIAL = ".partial";

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
            partial = Files.createTempFile(dir.get(), FILE, PARTIAL);
            try (FileChannel out = FileChannel.open(partial, StandardOpenOption.WRITE)) {
                ByteBuffer bytes = ByteBuffer.wrap(ConfigParser.toYaml(configs).getBytes(StandardCharsets.UTF_8));
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true); // the bytes are on disk before the rename makes them the config
            }
            Files.move(partial, dir.get().resolve(FILE), StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(dir.get());
        } catch (IOException e) {
            deleteQuietly(partial);
            throw new UncheckedIOException("cannot write the applied config into " + dir.get(), e);
        }
    }

    /**
     * Removes the partial files of writes that never finished (the process was killed between creating one and its
     * rename); call at startup, before anything writes. Never touches other files.
     *
     * @return how many were removed
     */
    int removeLeftovers() {
        if (dir.isEmpty() || !Files.isDirectory(dir.get())) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(dir.get(), FILE + "*" + PARTIAL)) {
            for (Path leftover : leftovers) {
                if (Files.deleteIfExists(leftover)) {
                    removed++;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean the state directory " + dir.get(), e);
        }
        return removed;
    }

    /** Makes a rename in {@code directory} durable (Linux: fsync of the directory); best-effort where unsupported. */
    private static void syncDirectory(Path directory) {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException ignored) {
            // some platforms cannot open or sync a directory; the rename itself is still atomic
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
