package dev.serval.api.clients;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Client libraries of other servers' APIs (huggingface_hub, LlamaIndex, Cohere), unmodified, in a venv of their own:
 * the scripts in {@code src/test/resources/clients/} call a running Serval with them. The venv is
 * {@code ~/.cache/serval/venvs/clients}, made with {@code python3 -m venv} and {@code pip install} of the pinned
 * {@code requirements.txt} (from the package registry) the first time, and reused while it holds the same
 * requirements (its {@code serval-requirements.txt} is written only once pip succeeded). A step that fails fails the
 * test with the tail of its output: these clients are what the tests check, never skipped.
 */
public final class PythonClients {

    private static final Path VENV = Path.of(System.getProperty("user.home"), ".cache", "serval", "venvs", "clients");
    private static final String COMPLETE = "serval-requirements.txt";

    private PythonClients() {
    }

    /** Runs {@code script} (a file of {@code src/test/resources/clients/}) with {@code args}; its standard output. */
    public static synchronized String run(String script, List<String> args) throws Exception {
        Path python = venv();
        Path file = Files.createTempFile("serval-client-", ".py");
        try {
            Files.writeString(file, resource(script));
            List<String> command = new ArrayList<>(List.of(python.toString(), file.toString()));
            command.addAll(args);
            return exec(command, 5);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static Path venv() throws Exception {
        String wanted = resource("requirements.txt");
        Path python = VENV.resolve("bin").resolve("python");
        Path complete = VENV.resolve(COMPLETE);
        if (Files.isExecutable(python) && Files.isRegularFile(complete) && Files.readString(complete).equals(wanted)) {
            return python;
        }
        if (Files.exists(VENV)) {
            try (Stream<Path> tree = Files.walk(VENV)) {
                for (Path path : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(path);
                }
            }
        }
        Files.createDirectories(VENV.getParent());
        exec(List.of("python3", "-m", "venv", VENV.toString()), 5);
        Path requirements = Files.createTempFile("serval-clients-", ".txt");
        try {
            Files.writeString(requirements, wanted);
            exec(List.of(python.toString(), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
                    "-r", requirements.toString()), 15);
        } finally {
            Files.deleteIfExists(requirements);
        }
        Files.writeString(complete, wanted);
        return python;
    }

    /** Runs {@code command}; its standard output, or the test fails with the tail of its error output. */
    private static String exec(List<String> command, int minutes) throws Exception {
        Path output = Files.createTempFile("serval-client-", ".out");
        Path errors = Files.createTempFile("serval-client-", ".err");
        try {
            Process process = new ProcessBuilder(command).redirectOutput(output.toFile())
                    .redirectError(errors.toFile()).start();
            if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                fail("`" + String.join(" ", command) + "` did not finish within " + minutes + " min:\n"
                        + tail(errors));
            }
            if (process.exitValue() != 0) {
                fail("`" + String.join(" ", command) + "` exited with " + process.exitValue() + ":\n" + tail(errors)
                        + "\n" + tail(output));
            }
            return Files.readString(output);
        } finally {
            Files.deleteIfExists(output);
            Files.deleteIfExists(errors);
        }
    }

    private static String tail(Path output) throws IOException {
        List<String> lines = Files.readAllLines(output);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = PythonClients.class.getResourceAsStream("/clients/" + name)) {
            if (in == null) {
                throw new IOException("no test resource clients/" + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
