package dev.serval.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged Serval ({@code target/quarkus-app/quarkus-run.jar}, built by {@code package} before this runs) started
 * as a user starts it, from a directory of their own with their own {@code $HOME}, once per configuration mistake:
 * each start stops with a non-zero status, and its output says the cause (where, the value, what is allowed, the
 * nearest known name) before anything else goes wrong, with no stack trace at all. A start that succeeds writes its
 * management token to a file of its own port under {@code $HOME}; one that fails writes none.
 */
class StartupMistakesIT {

    private static final Path JAR = Path.of("target", "quarkus-app", "quarkus-run.jar").toAbsolutePath();
    /** A stack frame, as Java prints one. */
    private static final Pattern FRAME = Pattern.compile("^\\s+at \\S+\\(.*\\)$");
    private static final Duration START = Duration.ofSeconds(120);

    @TempDir
    Path home;
    /** The directory Serval is started from (its working directory), inside which relative paths are meant. */
    private Path cwd;
    private int port;

    @BeforeEach
    void setUp() throws IOException {
        cwd = Files.createDirectories(home.resolve("work"));
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
    }

    @Test
    void aMisspeltPropertyIsNamedWithTheNearestKnownOne() {
        Run run = failedStart("-Dserval.deployments.all-minilm-l6-v2.predictor-thread=4");

        run.assertCauseFirst("serval.deployments.all-minilm-l6-v2.predictor-thread=4: unknown property (did you mean "
                + "'predictor-threads'?)");
    }

    @Test
    void aMisspeltFieldOfARelativeConfigFileIsNamedByAbsolutePathAndLine() throws IOException {
        Files.writeString(cwd.resolve("serval.yaml"), """
                deployments:
                  - name: minilm
                    model: all-minilm-l6-v2
                    num_replica: 2
                """);

        Run run = failedStart("-Dserval.config-file=serval.yaml");

        run.assertCauseFirst(cwd.resolve("serval.yaml") + ":4: deployment 'minilm': field 'num_replica': unknown field "
                + "(did you mean 'num_replicas'?)");
    }

    @Test
    void aValueOutOfRangeSaysWhatIsAllowed() throws IOException {
        Files.writeString(cwd.resolve("serval.yaml"), """
                deployments:
                  - name: minilm
                    model: all-minilm-l6-v2
                    max_batch_size: 5000
                """);

        Run run = failedStart("-Dserval.config-file=serval.yaml");

        run.assertCauseFirst(cwd.resolve("serval.yaml") + ":4: deployment 'minilm': field 'max_batch_size': must be "
                + "between 1 and 1024, not 5000");
    }

    @Test
    void aModelTheRepositoryLacksIsNamedWithTheFileItCameFrom() throws IOException {
        Files.writeString(cwd.resolve("serval.yaml"), """
                deployments:
                  - name: minilm
                    model: all-minilm-l6-v3
                """);

        Run run = failedStart("-Dserval.config-file=serval.yaml");

        run.assertCauseFirst(cwd.resolve("serval.yaml") + ": deployment 'minilm': field 'model': model "
                + "'all-minilm-l6-v3' is not in the repository " + home.resolve("repository") + "; it holds "
                + "all-minilm-l6-v2");
    }

    @Test
    void aMissingConfigFileIsNamedByTheAbsolutePathTried() {
        Run run = failedStart("-Dserval.config-file=missing.yaml");

        run.assertCauseFirst(cwd.resolve("missing.yaml") + ": the file does not exist");
    }

    @Test
    void aStateFileThatDoesNotParseSaysWhichFileWhyAndWhatToDo() throws IOException {
        Path state = Files.createDirectories(cwd.resolve("state"));
        Files.writeString(state.resolve("applied-config.yaml"), "deployments: [ {name: minilm, model: x\n");

        Run run = failedStart("-Dserval.state-dir=state");

        run.assertCauseFirst(state.resolve("applied-config.yaml") + ":1: not valid YAML or JSON");
        run.assertCauseFirst("delete it to start from the serval.deployments properties");
    }

    @Test
    void aTokenFileThatCannotBeWrittenStopsTheStartSayingWhy() throws IOException {
        Path notADirectory = Files.writeString(cwd.resolve("plain-file"), "");
        Files.writeString(cwd.resolve("serval.yaml"), "deployments: []\n");

        Run run = failedStart("-Dserval.config-file=serval.yaml",
                "-Dserval.api.token-file=" + notADirectory.resolve("api-token"));

        run.assertCauseFirst("could not write the one it generated to " + notADirectory.resolve("api-token"));
    }

    @Test
    void aStartedServerWritesItsTokenToAFileOfItsPortUnderHome() throws Exception {
        Files.writeString(cwd.resolve("serval.yaml"), "deployments: []\n");
        Process serval = start("-Dserval.config-file=serval.yaml");
        try {
            Path tokenFile = home.resolve(".cache/serval/api-token-" + port);
            String status = pollLive(serval);

            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(tokenFile)));
            String token = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
            HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/api/deployments"))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(status.contains("UP"), status);
        } finally {
            serval.destroy();
            serval.waitFor(30, TimeUnit.SECONDS);
            serval.destroyForcibly();
        }
    }

    /**
     * Polls liveness (readiness stays DOWN without deployments) until it answers 200 and the token file exists (the
     * start succeeded), failing when the process exits.
     */
    private String pollLive(Process serval) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + START.toNanos();
        while (System.nanoTime() < deadline) {
            assertTrue(serval.isAlive(), () -> "Serval exited: " + output(serval));
            try {
                HttpResponse<String> ready = client.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/q/health/live")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (ready.statusCode() == 200 && Files.exists(home.resolve(".cache/serval/api-token-" + port))) {
                    return ready.body();
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            serval.waitFor(100, TimeUnit.MILLISECONDS);
        }
        throw new AssertionError("not ready within " + START);
    }

    private Run failedStart(String... args) {
        Process serval = start(args);
        try {
            if (!serval.waitFor(START.toSeconds(), TimeUnit.SECONDS)) {
                serval.destroyForcibly();
                throw new AssertionError("Serval did not stop: " + output(serval));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        List<String> lines = output(serval).lines().toList();
        assertFalse(Files.exists(home.resolve(".cache/serval/api-token-" + port)),
                "a start that failed wrote no token file");
        return new Run(serval.exitValue(), lines);
    }

    /** Serval started from {@link #cwd} with {@link #home} as {@code $HOME}, output and errors to one file. */
    private Process start(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "--enable-native-access=ALL-UNNAMED", "-Dai.djl.offline=true",
                "-DOPT_OUT_TRACKING=true", "-Dai.djl.default_engine=OnnxRuntime", "-Dquarkus.http.port=" + port,
                "-Dserval.repository.path=" + home.resolve("repository")));
        command.addAll(List.of(args));
        command.addAll(List.of("-jar", JAR.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(home.resolve("output.txt").toFile());
        builder.environment().put("HOME", home.toString());
        builder.environment().put("DJL_OFFLINE", "true");
        builder.environment().put("OPT_OUT_TRACKING", "true");
        builder.environment().put("ORT_DISABLE_TELEMETRY", "1");
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String output(Process serval) {
        try {
            return Files.readString(home.resolve("output.txt"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A start's status and output lines. */
    private record Run(int exit, List<String> lines) {

        /**
         * Asserts that the start failed, that no stack trace was printed, and that a line says {@code cause} before
         * any other line at ERROR.
         */
        void assertCauseFirst(String cause) {
            String output = String.join("\n", lines);
            assertNotEquals(0, exit, output);
            for (String line : lines) {
                assertFalse(FRAME.matcher(line).matches(), () -> "a stack frame in the output:\n" + output);
            }
            for (String line : lines) {
                if (line.contains(cause)) {
                    return;
                }
                assertFalse(line.contains("ERROR") || line.contains("Exception"),
                        () -> "<" + line + "> before the cause <" + cause + ">:\n" + output);
            }
            throw new AssertionError("no line says <" + cause + ">:\n" + output);
        }
    }
}
