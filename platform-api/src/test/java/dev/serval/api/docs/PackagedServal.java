package dev.serval.api.docs;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged Serval ({@code target/quarkus-app/quarkus-run.jar}, built by {@code package}) started as a user starts
 * it with its defaults, on a free port, with {@code home} as its {@code $HOME} and Java's {@code user.home} (so its
 * token file and model repository are {@code home/.cache/serval/...}, where the docs' {@code ~} points for the shell
 * the docs test runs), its output to {@code home/serval.log}. Owned by the one test thread that starts and closes it.
 */
final class PackagedServal implements AutoCloseable {

    private static final Path JAR = Path.of("target", "quarkus-app", "quarkus-run.jar").toAbsolutePath();

    private final Process process;
    private final Path home;
    private final int port;

    private PackagedServal(Process process, Path home, int port) {
        this.process = process;
        this.home = home;
        this.port = port;
    }

    /** Starts Serval and waits, up to {@code within}, until {@code /v2/health/ready} answers 200 and its token file exists. */
    static PackagedServal startReady(Path home, Duration within) throws IOException, InterruptedException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                        .toString(), "--enable-native-access=ALL-UNNAMED", "-Dai.djl.offline=true",
                "-DOPT_OUT_TRACKING=true", "-Dai.djl.default_engine=OnnxRuntime", "-Dquarkus.http.port=" + port,
                "-Duser.home=" + home, "-jar", JAR.toString()));
        ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true)
                .redirectOutput(home.resolve("serval.log").toFile());
        builder.environment().put("HOME", home.toString());
        builder.environment().put("DJL_OFFLINE", "true");
        builder.environment().put("OPT_OUT_TRACKING", "true");
        builder.environment().put("ORT_DISABLE_TELEMETRY", "1");
        PackagedServal serval = new PackagedServal(builder.start(), home, port);
        try {
            serval.awaitReady(within);
        } catch (RuntimeException | Error | InterruptedException e) {
            serval.close();
            throw e;
        }
        return serval;
    }

    int port() {
        return port;
    }

    Path home() {
        return home;
    }

    /** The end of Serval's output, for a failure message. */
    String logTail() {
        try {
            List<String> lines = Files.readAllLines(home.resolve("serval.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private void awaitReady(Duration within) throws InterruptedException {
        HttpClient client = HttpClient.newHttpClient();
        Path tokenFile = home.resolve(".cache/serval/api-token-" + port);
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("Serval exited with " + process.exitValue() + ":\n" + logTail());
            }
            try {
                HttpResponse<Void> ready = client.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/v2/health/ready")).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (ready.statusCode() == 200 && Files.exists(tokenFile)) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            process.waitFor(100, TimeUnit.MILLISECONDS);
        }
        throw new AssertionError("Serval was not ready within " + within + ":\n" + logTail());
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
