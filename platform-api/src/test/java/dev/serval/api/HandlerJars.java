package dev.serval.api;

import dev.serval.spi.Handler;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Builds custom-handler jars from Java source, as a user would: compiled by the JDK's compiler against the SPI alone
 * (platform-spi's classes on the class path, nothing else of Serval), then packed into a jar.
 */
final class HandlerJars {

    private HandlerJars() {
    }

    /**
     * Compiles {@code sources} (fully qualified class name to source) and writes their classes to {@code jar}.
     *
     * @throws AssertionError with the compiler's output when a source does not compile
     */
    static Path build(Path jar, Map<String, String> sources) {
        try {
            Path work = Files.createTempDirectory("handler-src");
            Path classes = Files.createDirectories(work.resolve("classes"));
            List<String> arguments = new java.util.ArrayList<>(List.of("--release", "21", "-classpath", spiClassPath(),
                    "-d", classes.toString()));
            for (Map.Entry<String, String> source : sources.entrySet()) {
                Path file = work.resolve(source.getKey().replace('.', '/') + ".java");
                Files.createDirectories(file.getParent());
                Files.writeString(file, source.getValue());
                arguments.add(file.toString());
            }
            JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
            java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
            if (compiler.run(null, errors, errors, arguments.toArray(String[]::new)) != 0) {
                throw new AssertionError("the handler sources do not compile:\n" + errors);
            }
            Files.createDirectories(jar.getParent());
            try (OutputStream out = Files.newOutputStream(jar); JarOutputStream packed = new JarOutputStream(out);
                    Stream<Path> files = Files.walk(classes)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) {
                    packed.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                    packed.write(Files.readAllBytes(file));
                    packed.closeEntry();
                }
            }
            return jar;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where the SPI's classes are (platform-spi's classes folder or jar). */
    private static String spiClassPath() {
        try {
            return Path.of(Handler.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
