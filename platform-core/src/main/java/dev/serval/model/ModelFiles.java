package dev.serval.model;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Puts model files shipped on the class path (inside a jar) into a directory once, so that every start,
 * every deployment and DJL itself read the same plain file instead of DJL copying the jar entry into its
 * cache once per distinct jar location. Safe against concurrent starts: a file is written under a temporary
 * name and moved into place atomically, and an existing file of the right size is kept.
 */
public final class ModelFiles {

    private ModelFiles() {
    }

    /**
     * Returns {@code directory/name}, copying the class-path resource {@code name} there first unless a file
     * of the same size is already there.
     *
     * @throws IllegalArgumentException when no such resource is on the class path
     * @throws UncheckedIOException     when the directory or the file cannot be written
     */
    public static Path extract(ClassLoader classLoader, String name, Path directory) {
        return extract(classLoader, name, directory, name);
    }

    /** {@link #extract(ClassLoader, String, Path)} into {@code directory/fileName}. */
    public static Path extract(ClassLoader classLoader, String name, Path directory, String fileName) {
        URL resource = classLoader.getResource(name);
        if (resource == null) {
            throw new IllegalArgumentException("no resource '" + name + "' on the class path");
        }
        Path target = directory.resolve(fileName);
        try {
            URLConnection connection = resource.openConnection();
            connection.setUseCaches(false);
            long size = connection.getContentLengthLong();
            if (size >= 0 && Files.isRegularFile(target) && Files.size(target) == size) {
                return target;
            }
            Files.createDirectories(directory);
            Path partial = Files.createTempFile(directory, fileName, ".partial");
            try (InputStream in = connection.getInputStream()) {
                Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
                Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(partial);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract '" + name + "' into " + directory, e);
        }
    }
}
