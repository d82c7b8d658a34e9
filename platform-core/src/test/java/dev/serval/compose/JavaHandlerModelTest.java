package dev.serval.compose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.deployment.Callees;
import dev.serval.deployment.Deployment;
import dev.serval.model.Composite;
import dev.serval.spi.Handler;
import dev.serval.spi.Request;
import dev.serval.spi.Tensor;
import dev.serval.spi.TensorSpec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading a handler: whatever fails after its {@code open} succeeded, the handler is closed before the load fails. */
class JavaHandlerModelTest {

    /** Set by {@link BadSignature#close} in the handler's own class loader (the JDK's System is shared). */
    private static final String CLOSED = "serval.test.bad-signature.closed";

    /** Opens fine, then cannot say what it takes. */
    public static final class BadSignature implements Handler {
        @Override
        public List<TensorSpec> inputs() {
            throw new IllegalStateException("no signature");
        }

        @Override
        public List<Tensor> handle(Request request) {
            return List.of();
        }

        @Override
        public void close() {
            System.setProperty(CLOSED, "true");
        }
    }

    private static final Callees NONE = new Callees() {
        @Override
        public Deployment<?, ?> find(String name) {
            return null;
        }

        @Override
        public MeterRegistry meters() {
            return new SimpleMeterRegistry();
        }
    };

    @Test
    void aHandlerWhoseSignatureThrowsAfterOpenIsClosedAndTheLoadFailsNamingIt(@TempDir Path dir) throws IOException {
        System.clearProperty(CLOSED);
        Path jar = jarOf(dir.resolve("handler.jar"), BadSignature.class);

        IOException failure = assertThrows(IOException.class, () -> JavaHandlerModel.load(
                new Composition("bad", dir, NONE), new Composite.JavaHandler("handler.jar", BadSignature.class.getName()),
                jar));

        assertTrue(failure.getMessage().contains("no signature"), failure.getMessage());
        assertTrue(failure.getMessage().contains(BadSignature.class.getName()), failure.getMessage());
        assertEquals("true", System.getProperty(CLOSED), "the opened handler was closed");
        System.clearProperty(CLOSED);
    }

    /** A jar holding {@code type}'s class file, as a user's build would make it. */
    private static Path jarOf(Path jar, Class<?> type) throws IOException {
        String entry = type.getName().replace('.', '/') + ".class";
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream packed = new JarOutputStream(out);
                InputStream bytes = type.getClassLoader().getResourceAsStream(entry)) {
            packed.putNextEntry(new JarEntry(entry));
            bytes.transferTo(packed);
            packed.closeEntry();
        }
        return jar;
    }
}
