package dev.serval.model.onnx;

import dev.serval.model.NativeRuntime;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which {@code libonnxruntime.so} the process runs. ONNX Runtime Java's Maven releases lag the runtime's (Java
 * 1.29.0 while the runtime is at 1.32.0, faster on the default model: docs/onnxruntime.md), and ONNX Runtime's C API is
 * backward compatible: a newer runtime serves every older API version. So Serval packages the newest official runtime
 * (the {@code libonnxruntime.so} of the onnxruntime wheel, checked by its SHA-256 at build time; platform-core's pom)
 * and runs it under ONNX Runtime Java's classes and JNI binding.
 *
 * <p>The one obstacle is a symbol version: the binding asks for {@code OrtGetApiBase} at the version it was built with
 * ({@code VERS_1.29.0}), and each runtime names only its own ({@code VERS_1.32.0}), so the dynamic linker refuses the
 * pair. {@link #select} writes a copy of the binding that asks for the runtime's version instead ({@link ElfVersions};
 * the name is rewritten in place, nothing else changes), next to the runtime, and points ONNX Runtime Java's own
 * loading properties ({@code onnxruntime.native.onnxruntime.path}, {@code onnxruntime.native.onnxruntime4j_jni.path})
 * at the two files. A runtime older than the binding is refused: it cannot serve the API version the binding asks for.
 *
 * <p>Choices ({@value #PROPERTY}): {@value #PACKAGED} (the default: the packaged runtime when this platform has one,
 * else the jar's), {@value #JAR} (the runtime inside ONNX Runtime Java's jar), or the absolute path of a
 * {@code libonnxruntime.so}. Selecting must happen before the first ONNX Runtime call in the process; the edge selects
 * from its configuration at start, and {@link OnnxSessions#open} selects the default when nothing did. A JVM started
 * with ONNX Runtime's own {@code onnxruntime.native.*} properties keeps them.
 *
 * <p>Threads: {@link #select} and {@link #ensureSelected} are synchronized and run once per process in practice;
 * {@link #loaded} reads {@code /proc/self/maps}, the process's word on what it actually runs.
 */
public final class OnnxRuntimeLibrary {

    /** The setting naming the runtime (a system property here; {@code serval.onnxruntime.library} at the edge). */
    public static final String PROPERTY = "serval.onnxruntime.library";
    /** The newest runtime packaged with Serval for this platform, else the jar's. */
    public static final String PACKAGED = "packaged";
    /** The runtime inside ONNX Runtime Java's jar. */
    public static final String JAR = "onnxruntime-jar";

    private static final System.Logger LOG = System.getLogger(OnnxRuntimeLibrary.class.getName());
    private static final String RUNTIME_PATH = "onnxruntime.native.onnxruntime.path";
    private static final String RUNTIME_DIRECTORY = "onnxruntime.native.path";
    private static final String BINDING_PATH = "onnxruntime.native.onnxruntime4j_jni.path";
    private static final String RUNTIME_SONAME = "libonnxruntime.so.1";
    private static final Pattern VERSION = Pattern.compile("VERS_(\\d{1,4})\\.(\\d{1,4})\\.(\\d{1,4})");

    private static NativeRuntime selected;
    private static String chosen;

    private OnnxRuntimeLibrary() {
    }

    /**
     * Selects the runtime the first ONNX Runtime call loads: {@value #PACKAGED}, {@value #JAR} or an absolute path.
     * Selecting again returns the first selection when the choice is the same, and refuses another choice.
     *
     * @throws IOException when a path is not a readable ELF library, is older than ONNX Runtime Java's binding, or the
     *                     files cannot be written
     */
    public static synchronized NativeRuntime select(String choice) throws IOException {
        if (selected != null) {
            if (!choice.equals(chosen)) {
                throw new IllegalStateException("the ONNX Runtime library was already selected (" + chosen
                        + "); it cannot change to " + choice + " in a running process");
            }
            return selected;
        }
        boolean ortProperties = System.getProperty(RUNTIME_PATH) != null
                || System.getProperty(RUNTIME_DIRECTORY) != null;
        selected = ortProperties ? fromOrtProperties() : prepare(choice);
        chosen = choice;
        LOG.log(System.Logger.Level.INFO, "ONNX Runtime {0} ({1}) under ONNX Runtime Java {2}", selected.version(),
                selected.source(), javaApiVersion());
        return selected;
    }

    /**
     * The runtime ONNX Runtime's own properties name, when the JVM was started with them (or another class loader of
     * this process, such as a test framework's, selected first): they are kept.
     */
    private static NativeRuntime fromOrtProperties() {
        String file = System.getProperty(RUNTIME_PATH);
        Path runtime = file != null ? Path.of(file)
                : Path.of(System.getProperty(RUNTIME_DIRECTORY), "libonnxruntime.so");
        String source = "ONNX Runtime's onnxruntime.native.* properties: " + runtime;
        try {
            return new NativeRuntime(runtimeVersion(runtime), javaApiVersion(), source, Optional.of(runtime));
        } catch (IOException | RuntimeException e) {
            return new NativeRuntime("unknown", javaApiVersion(), source, Optional.empty());
        }
    }

    /** The selection, selecting the system property {@value #PROPERTY}'s choice (default {@value #PACKAGED}) first. */
    public static synchronized NativeRuntime ensureSelected() throws IOException {
        return selected != null ? selected : select(System.getProperty(PROPERTY, PACKAGED));
    }

    /**
     * The {@code libonnxruntime} this process has mapped, with the version it defines: what really runs, whatever was
     * selected. Empty before the first ONNX Runtime call, or where {@code /proc/self/maps} does not exist.
     */
    public static Optional<NativeRuntime> loaded() {
        Path maps = Path.of("/proc/self/maps");
        if (!Files.isReadable(maps)) {
            return Optional.empty();
        }
        try {
            for (String line : Files.readAllLines(maps)) {
                int slash = line.indexOf('/');
                if (slash < 0) {
                    continue;
                }
                Path file = Path.of(line.substring(slash).replace(" (deleted)", ""));
                String name = file.getFileName().toString();
                if (name.startsWith("libonnxruntime.so") && Files.isRegularFile(file)) {
                    return Optional.of(new NativeRuntime(runtimeVersion(file), javaApiVersion(), "mapped",
                            Optional.of(file)));
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The platform directory under which runtimes are packaged ({@code linux-x64}), or empty when not Linux. */
    static Optional<String> platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux")) {
            return Optional.empty();
        }
        return switch (arch) {
            case "amd64", "x86_64" -> Optional.of("linux-x64");
            case "aarch64", "arm64" -> Optional.of("linux-aarch64");
            default -> Optional.empty();
        };
    }

    /** Places the files for {@code choice} and sets ONNX Runtime Java's properties; see {@link #select}. */
    static NativeRuntime prepare(String choice) throws IOException {
        if (choice.equals(JAR)) {
            return new NativeRuntime(javaApiVersion(), javaApiVersion(), "ONNX Runtime Java's jar", Optional.empty());
        }
        Optional<String> platform = platform();
        if (choice.equals(PACKAGED)) {
            String resource = platform.map(p -> "dev/serval/model/onnx/native/" + p + "/libonnxruntime.so")
                    .orElse(null);
            if (resource == null || OnnxRuntimeLibrary.class.getClassLoader().getResource(resource) == null) {
                return new NativeRuntime(javaApiVersion(), javaApiVersion(), "ONNX Runtime Java's jar: no runtime is"
                        + " packaged for " + platform.orElse(System.getProperty("os.name") + "/"
                        + System.getProperty("os.arch")), Optional.empty());
            }
            Path directory = directory();
            Path runtime = directory.resolve("libonnxruntime.so");
            try (InputStream in = OnnxRuntimeLibrary.class.getClassLoader().getResourceAsStream(resource)) {
                Files.copy(in, runtime, StandardCopyOption.REPLACE_EXISTING);
            }
            runtime.toFile().deleteOnExit();
            return useWithBinding(runtime, directory, "packaged with Serval", platform.get());
        }
        Path runtime = Path.of(choice);
        if (!runtime.isAbsolute() || !Files.isRegularFile(runtime) || !Files.isReadable(runtime)) {
            throw new IOException("'" + choice + "' is neither " + PACKAGED + ", " + JAR
                    + " nor the absolute path of a readable libonnxruntime.so");
        }
        if (platform.isEmpty()) {
            throw new IOException(PROPERTY + " names a library, which Serval can only adapt on Linux x64/aarch64");
        }
        return useWithBinding(runtime, directory(), runtime.toString(), platform.get());
    }

    /** Writes the binding adapted to {@code runtime} into {@code directory} and points ONNX Runtime Java at both. */
    private static NativeRuntime useWithBinding(Path runtime, Path directory, String source, String platform)
            throws IOException {
        String runtimeVersion = runtimeVersion(runtime);
        byte[] binding = binding(platform);
        ElfVersions bindingVersions = ElfVersions.read(ByteBuffer.wrap(binding));
        String needed = neededVersion(bindingVersions);
        if (compare(runtimeVersion, version(needed)) < 0) {
            throw new IOException(runtime + " is ONNX Runtime " + runtimeVersion + ", older than ONNX Runtime Java's "
                    + version(needed) + ": it cannot serve the API the Java classes ask for");
        }
        byte[] adapted = needed.equals("VERS_" + runtimeVersion) ? binding
                : bindingVersions.withNeeded(RUNTIME_SONAME, needed, "VERS_" + runtimeVersion);
        Path jni = directory.resolve("libonnxruntime4j_jni.so");
        Files.write(jni, adapted);
        jni.toFile().deleteOnExit();
        System.setProperty(RUNTIME_PATH, runtime.toString());
        System.setProperty(BINDING_PATH, jni.toString());
        return new NativeRuntime(runtimeVersion, javaApiVersion(), source, Optional.of(runtime));
    }

    private static Path directory() throws IOException {
        Path directory = Files.createTempDirectory("serval-onnxruntime");
        directory.toFile().deleteOnExit(); // registered first, so deleted last: after the files in it
        return directory;
    }

    /** ONNX Runtime Java's JNI binding for {@code platform}, from its jar. */
    private static byte[] binding(String platform) throws IOException {
        String resource = "ai/onnxruntime/native/" + platform + "/libonnxruntime4j_jni.so";
        try (InputStream in = OnnxRuntimeLibrary.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("ONNX Runtime Java's jar has no " + resource);
            }
            return in.readAllBytes();
        }
    }

    /** The version of ONNX Runtime Java's binding: the runtime version it was built against ({@code 1.29.0}). */
    public static String javaApiVersion() {
        return JavaApi.VERSION;
    }

    /**
     * Read once from the binding's ELF, not from ONNX Runtime Java's classes: touching them loads the native libraries,
     * which must wait for the selection.
     */
    private static final class JavaApi {
        static final String VERSION = read();

        private static String read() {
            try {
                return version(neededVersion(ElfVersions.read(ByteBuffer.wrap(binding(platform().orElseThrow())))));
            } catch (IOException | RuntimeException e) {
                return "unknown";
            }
        }
    }

    private static String neededVersion(ElfVersions binding) throws IOException {
        List<String> versions = binding.needed().stream().filter(n -> n.file().equals(RUNTIME_SONAME))
                .map(ElfVersions.Needed::version).filter(v -> VERSION.matcher(v).matches()).distinct().toList();
        if (versions.size() != 1) {
            throw new IOException("ONNX Runtime Java's binding needs " + versions + " of " + RUNTIME_SONAME
                    + "; expected one VERS_x.y.z");
        }
        return versions.getFirst();
    }

    /** The version a runtime library defines ({@code 1.32.0} for {@code VERS_1.32.0}). */
    static String runtimeVersion(Path runtime) throws IOException {
        try (FileChannel channel = FileChannel.open(runtime, StandardOpenOption.READ)) {
            if (channel.size() > Integer.MAX_VALUE) {
                throw new IOException(runtime + " is larger than 2 GiB");
            }
            ElfVersions elf = ElfVersions.read(channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size()));
            List<String> versions = elf.defined().stream().filter(v -> VERSION.matcher(v).matches()).toList();
            if (versions.size() != 1) {
                throw new IOException("it defines versions " + elf.defined()
                        + "; an ONNX Runtime library defines one VERS_x.y.z");
            }
            return version(versions.getFirst());
        } catch (IOException e) {
            throw new IOException(runtime + " is not an ONNX Runtime library: " + e.getMessage(), e);
        }
    }

    private static String version(String name) {
        Matcher m = VERSION.matcher(name);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a VERS_x.y.z version: " + name);
        }
        return m.group(1) + "." + m.group(2) + "." + m.group(3);
    }

    /** Compares two x.y.z versions numerically. */
    static int compare(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < 3; i++) {
            int c = Integer.compare(Integer.parseInt(x[i]), Integer.parseInt(y[i]));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }
}
