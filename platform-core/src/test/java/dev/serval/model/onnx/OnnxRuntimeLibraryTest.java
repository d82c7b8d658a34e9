package dev.serval.model.onnx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.LoadOptions;
import dev.serval.model.TinyModels;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged ONNX Runtime really runs under ONNX Runtime Java's binding: the binding's needed version is rewritten
 * and nothing else, the process maps the packaged library once a session exists, and what cannot work (a foreign file,
 * an older runtime, a relative path, a second choice) is refused with a message naming it.
 */
class OnnxRuntimeLibraryTest {

    private static final String BINDING = "ai/onnxruntime/native/linux-x64/libonnxruntime4j_jni.so";
    private static final String PACKAGED = "dev/serval/model/onnx/native/linux-x64/libonnxruntime.so";

    @TempDir
    Path dir;

    @Test
    void theBindingAsksForTheRuntimeVersionOfItsJar() throws IOException {
        ElfVersions binding = ElfVersions.read(ByteBuffer.wrap(resource(BINDING)));
        assertTrue(binding.needed().stream().anyMatch(n -> n.file().equals("libonnxruntime.so.1")
                && n.version().equals("VERS_1.29.0")), binding.needed().toString());
        assertEquals("1.29.0", OnnxRuntimeLibrary.javaApiVersion());
    }

    @Test
    void adaptingTheBindingRewritesTheNeededVersionAndNothingElse() throws IOException {
        byte[] original = resource(BINDING);
        ElfVersions binding = ElfVersions.read(ByteBuffer.wrap(original));
        byte[] adapted = binding.withNeeded("libonnxruntime.so.1", "VERS_1.29.0", "VERS_1.32.0");

        ElfVersions reread = ElfVersions.read(ByteBuffer.wrap(adapted));
        ElfVersions.Needed need = reread.needed().stream().filter(n -> n.file().equals("libonnxruntime.so.1"))
                .findFirst().orElseThrow();
        assertEquals("VERS_1.32.0", need.version());
        long hash = Integer.toUnsignedLong(ByteBuffer.wrap(adapted).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .getInt(need.auxOffset()));
        assertEquals(ElfVersions.hash("VERS_1.32.0".getBytes(StandardCharsets.US_ASCII)), hash);
        // glibc's versions of libc are untouched, and only the name (2 characters) and its hash (up to 4 bytes) differ
        assertEquals(binding.needed().stream().filter(n -> n.file().equals("libc.so.6")).toList(),
                reread.needed().stream().filter(n -> n.file().equals("libc.so.6")).toList());
        int differing = 0;
        for (int i = 0; i < original.length; i++) {
            differing += original[i] != adapted[i] ? 1 : 0;
        }
        assertTrue(differing >= 2 && differing <= 6, differing + " bytes differ");
        assertThrows(IOException.class, () -> binding.withNeeded("libonnxruntime.so.1", "VERS_1.29.0", "VERS_1.100.0"));
        assertThrows(IOException.class, () -> binding.withNeeded("libonnxruntime.so.1", "VERS_1.28.0", "VERS_1.32.0"));
    }

    @Test
    void theElfHashIsTheOneTheLinkerWrote() throws IOException {
        byte[] original = resource(BINDING);
        ByteBuffer bytes = ByteBuffer.wrap(original).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        List<ElfVersions.Needed> needed = ElfVersions.read(bytes).needed();
        assertTrue(needed.size() >= 3, needed.toString()); // VERS_1.29.0 and glibc's
        for (ElfVersions.Needed need : needed) {
            assertEquals(Integer.toUnsignedLong(bytes.getInt(need.auxOffset())),
                    ElfVersions.hash(need.version().getBytes(StandardCharsets.US_ASCII)), need.version());
        }
        assertEquals(0L, ElfVersions.hash(new byte[0]));
    }

    @Test
    void theProcessRunsThePackagedRuntimeOnceASessionExists() throws IOException {
        assertTrue(OnnxRuntimeLibraryTest.class.getClassLoader().getResource(PACKAGED) != null,
                "platform-core packages " + PACKAGED + " (unless built with -Donnxruntime.packaged.skip=true)");
        try (TensorModel model = TensorModel.load(TinyModels.file("tiny-mlp", "model.onnx"), OnnxOptions.none(),
                LoadOptions.defaults())) {
            dev.serval.model.NativeRuntime selected = OnnxRuntimeLibrary.ensureSelected();
            dev.serval.model.NativeRuntime mapped = OnnxRuntimeLibrary.loaded().orElseThrow();
            assertEquals("1.32.0", selected.version(), selected.toString());
            assertEquals(selected.file(), mapped.file(), "the process maps the selected library");
            assertEquals("1.32.0", mapped.version());
            assertTrue(model.signature().inputs().size() > 0);
        }
        assertEquals(OnnxRuntimeLibrary.ensureSelected(), OnnxRuntimeLibrary.select(OnnxRuntimeLibrary.PACKAGED));
        IllegalStateException change = assertThrows(IllegalStateException.class,
                () -> OnnxRuntimeLibrary.select(OnnxRuntimeLibrary.JAR));
        assertTrue(change.getMessage().contains("cannot change"), change.getMessage());
    }

    @Test
    void aPathThatIsNoNewerOnnxRuntimeIsRefusedByName() throws IOException {
        IOException relative = assertThrows(IOException.class,
                () -> OnnxRuntimeLibrary.prepare("lib/libonnxruntime.so"));
        assertTrue(relative.getMessage().contains("absolute path"), relative.getMessage());
        assertThrows(IOException.class, () -> OnnxRuntimeLibrary.prepare(dir.resolve("missing.so").toString()));

        Path text = Files.writeString(dir.resolve("libonnxruntime.so"), "not a library");
        IOException foreign = assertThrows(IOException.class, () -> OnnxRuntimeLibrary.prepare(text.toString()));
        assertTrue(foreign.getMessage().contains("not an ONNX Runtime library"), foreign.getMessage());

        // the jar's own 1.29 runtime with its version renamed to 1.20: older than the binding
        byte[] runtime = resource("ai/onnxruntime/native/linux-x64/libonnxruntime.so");
        replace(runtime, "VERS_1.29.0", "VERS_1.20.0");
        Path older = Files.write(dir.resolve("libonnxruntime.so.1.20.0"), runtime);
        assertEquals("1.20.0", OnnxRuntimeLibrary.runtimeVersion(older));
        IOException tooOld = assertThrows(IOException.class, () -> OnnxRuntimeLibrary.prepare(older.toString()));
        assertTrue(tooOld.getMessage().contains("older than ONNX Runtime Java's 1.29.0"), tooOld.getMessage());
    }

    @Test
    void hostileElfFilesAreIoExceptionsNeverCrashes() throws IOException {
        byte[] binding = resource(BINDING);
        Random random = new Random(42);
        for (int length : new int[] {0, 3, 63, 64, 200, 4096, binding.length / 2, binding.length - 1}) {
            byte[] truncated = Arrays.copyOf(binding, length);
            readOrIoException(truncated);
        }
        for (int i = 0; i < 300; i++) {
            byte[] corrupted = binding.clone();
            for (int k = 0; k < 8; k++) { // damage the headers, where every offset comes from
                corrupted[random.nextInt(Math.min(corrupted.length, 256))] = (byte) random.nextInt();
            }
            int at = random.nextInt(corrupted.length - 4); // and somewhere else
            corrupted[at] = (byte) random.nextInt();
            readOrIoException(corrupted);
        }
        byte[] noise = new byte[8192];
        random.nextBytes(noise);
        noise[0] = 0x7f;
        noise[1] = 'E';
        noise[2] = 'L';
        noise[3] = 'F';
        noise[4] = 2;
        noise[5] = 1;
        readOrIoException(noise);
    }

    @Test
    void runtimesCompareByNumberNotText() {
        assertTrue(OnnxRuntimeLibrary.compare("1.32.0", "1.29.0") > 0);
        assertTrue(OnnxRuntimeLibrary.compare("1.100.0", "1.32.0") > 0);
        assertTrue(OnnxRuntimeLibrary.compare("1.29.1", "1.29.0") > 0);
        assertEquals(0, OnnxRuntimeLibrary.compare("1.29.0", "1.29.0"));
        assertTrue(OnnxRuntimeLibrary.compare("0.99.9", "1.0.0") < 0);
        assertEquals(List.of("linux-x64"), OnnxRuntimeLibrary.platform().stream().toList());
    }

    private static void readOrIoException(byte[] bytes) {
        try {
            ElfVersions elf = ElfVersions.read(ByteBuffer.wrap(bytes));
            elf.defined();
            elf.needed();
        } catch (IOException expected) {
            // what a damaged file must give
        } catch (RuntimeException e) {
            throw new AssertionError("a damaged ELF file threw " + e, e);
        }
    }

    private static void replace(byte[] bytes, String from, String to) {
        byte[] a = from.getBytes(StandardCharsets.US_ASCII);
        byte[] b = to.getBytes(StandardCharsets.US_ASCII);
        int replaced = 0;
        outer:
        for (int i = 0; i + a.length <= bytes.length; i++) {
            for (int k = 0; k < a.length; k++) {
                if (bytes[i + k] != a[k]) {
                    continue outer;
                }
            }
            System.arraycopy(b, 0, bytes, i, b.length);
            replaced++;
        }
        assertTrue(replaced > 0, "no " + from);
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = OnnxRuntimeLibraryTest.class.getClassLoader().getResourceAsStream(name)) {
            assertTrue(in != null, name + " on the class path");
            return in.readAllBytes();
        }
    }
}
