package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The compute limit as Python reaches it: {@code raw_onnxruntime.py} (a resource of this jar, next to this class),
 * the loop of {@link RawEmbeddingLoop} written with Python onnxruntime, Hugging Face tokenizers and numpy, run from a
 * venv of its own per onnxruntime version, and driven through the same line protocol. Two versions are measured:
 * the one the Java runtime ships (isolating what Java and DJL cost) and {@link #NEWEST_ONNXRUNTIME} (the best runtime
 * there is). Every package the script imports is pinned, so that a figure names what produced it.
 *
 * <p>A venv lives in {@code DIR/onnxruntime-VERSION} and is reused when it holds {@link #COMPLETE}, written only after
 * {@code pip install} succeeded with the same requirements; otherwise it is deleted and made again. Every step's
 * output goes to {@code DIR/onnxruntime-VERSION.log}; a failed step is reported with the tail of that output
 * ({@link Venv#failure}), never thrown, so that the benchmark goes on with the DJL limit only. Stateless.
 */
final class PythonRawLoop {

    /** The newest Python onnxruntime release at the time of writing: the best runtime the benchmark measures. */
    static final String NEWEST_ONNXRUNTIME = "1.32.0";
    static final String TOKENIZERS = "0.23.3";
    static final String NUMPY = "2.4.6";
    static final String SCRIPT = "raw_onnxruntime.py";
    /** The file that marks a venv as complete; it holds the requirements that were installed. */
    static final String COMPLETE = "serval-requirements.txt";
    private static final Duration STEP_TIMEOUT = Duration.ofMinutes(10);
    private static final int TAIL_LINES = 12;

    private PythonRawLoop() {
    }

    /**
     * A venv (named for what it holds: an onnxruntime version, or another benchmark's name): ready ({@code python}
     * set, {@code failure} null) or not (why: the step that failed, its exit status and the tail of its output).
     */
    record Venv(String name, Path python, boolean reused, String failure) {

        boolean ready() {
            return failure == null;
        }
    }

    /** What pip installs into the venv of {@code onnxruntime}. */
    static List<String> requirements(String onnxruntime) {
        return List.of("onnxruntime==" + onnxruntime, "tokenizers==" + TOKENIZERS, "numpy==" + NUMPY);
    }

    /**
     * The venv of {@code onnxruntime} under {@code dir}, made with {@code interpreter} ({@code python3}) unless a
     * complete one with the same requirements is there.
     */
    static Venv prepare(String interpreter, Path dir, String onnxruntime) {
        return prepare(interpreter, dir, onnxruntime, "onnxruntime-" + onnxruntime, requirements(onnxruntime));
    }

    /**
     * The venv {@code dir/directory} holding {@code requirements}, made with {@code interpreter} unless a complete
     * one with the same requirements is there; its log is {@code dir/directory.log}.
     */
    static Venv prepare(String interpreter, Path dir, String name, String directory, List<String> requirements) {
        Path venv = dir.resolve(directory).toAbsolutePath();
        Path python = venv.resolve("bin").resolve("python");
        Path log = dir.resolve(directory + ".log").toAbsolutePath();
        String wanted = String.join("\n", requirements) + "\n";
        try {
            Files.createDirectories(dir);
            Path complete = venv.resolve(COMPLETE);
            if (Files.isExecutable(python) && Files.isRegularFile(complete)
                    && Files.readString(complete).equals(wanted)) {
                return new Venv(name, python, true, null);
            }
            deleteTree(venv);
            Files.writeString(log, "");
            String failure = step(List.of(interpreter, "-m", "venv", venv.toString()), log);
            if (failure == null) {
                List<String> pip = new ArrayList<>(List.of(python.toString(), "-m", "pip", "install",
                        "--disable-pip-version-check", "--no-input"));
                pip.addAll(requirements);
                failure = step(pip, log);
            }
            if (failure != null) {
                return new Venv(name, null, false, failure);
            }
            Files.writeString(complete, wanted);
            return new Venv(name, python, false, null);
        } catch (IOException e) {
            return new Venv(name, null, false, "preparing " + venv + " failed: " + e);
        }
    }

    /** Runs {@code command}, its output appended to {@code log}; null if it exits 0, else what went wrong. */
    private static String step(List<String> command, Path log) throws IOException {
        String shown = "`" + String.join(" ", command) + "`";
        Files.writeString(log, "$ " + String.join(" ", command) + "\n", java.nio.file.StandardOpenOption.APPEND);
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            return shown + " could not start: " + e.getMessage();
        }
        try {
            if (!process.waitFor(STEP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return shown + " did not finish within " + STEP_TIMEOUT.toMinutes() + " min; its output ends with:\n"
                        + tail(log);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return shown + " was interrupted";
        }
        return process.exitValue() == 0 ? null
                : shown + " failed (exit status " + process.exitValue() + "); its output ends with:\n" + tail(log);
    }

    /** The last lines of {@code file}. */
    static String tail(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    /** Writes the script from the class path to {@code dir} (each run, so that it matches this jar). */
    static Path writeScript(Path dir) throws IOException {
        return writeScript(dir, SCRIPT);
    }

    /** Writes the resource {@code name} (a script next to this class) to {@code dir}, replacing an older copy. */
    static Path writeScript(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        Path script = dir.resolve(name).toAbsolutePath();
        try (InputStream in = PythonRawLoop.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("no resource " + name + " next to " + PythonRawLoop.class.getName());
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        return script;
    }

    /** Writes {@code texts} as a JSON list to {@code dir/texts-NAME.json}. */
    static Path writeTexts(Path dir, String name, List<String> texts) throws IOException {
        Path file = dir.resolve("texts-" + name + ".json").toAbsolutePath();
        new ObjectMapper().writeValue(file.toFile(), texts);
        return file;
    }

    /**
     * Starts the script from {@code venv} with up to {@code maxWorkers} worker processes over the default model and
     * the text sets {@code texts} (name to JSON file); its {@code READY} line is still to be awaited.
     */
    static ChildProcess start(Venv venv, Path script, Map<String, Path> texts, int maxWorkers) throws IOException {
        if (!venv.ready()) {
            throw new IllegalArgumentException("venv of onnxruntime " + venv.name() + " is not ready: "
                    + venv.failure());
        }
        List<String> command = new ArrayList<>(List.of(venv.python().toString(), script.toString(),
                "--model", RawEmbeddingLoop.modelFile(RawEmbeddingLoop.MODEL).toString(),
                "--tokenizer", RawEmbeddingLoop.modelFile(RawEmbeddingLoop.TOKENIZER).toString(),
                "--max-workers", Integer.toString(maxWorkers)));
        texts.forEach((name, file) -> command.addAll(List.of("--texts", name + "=" + file)));
        return ChildProcess.start(command);
    }
}
