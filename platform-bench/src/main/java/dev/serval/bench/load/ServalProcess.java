package dev.serval.bench.load;

import java.io.IOException;
import java.net.InetAddress;
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

/**
 * The packaged Serval ({@code platform-api/target/quarkus-app/quarkus-run.jar}, relative to the working directory,
 * which must be the repository root) running in a child JVM of the same {@code java} on a free loopback port,
 * with DJL kept offline and glibc malloc's arenas capped as the shipped launchers cap them ({@code MALLOC_ARENA_MAX}
 * 2, unless set in this process's environment). {@link #start} returns once {@code /v2/health/ready} answers 200, so
 * every deployment has its warmed-up replicas; {@link #close} stops the process (SIGTERM, then SIGKILL after 30 s).
 * Its console goes to a log file. Not thread-safe: one owner starts, uses and closes it.
 */
public final class ServalProcess implements AutoCloseable {

    /** The application jar, relative to the repository root. */
    public static final Path JAR = Path.of("platform-api", "target", "quarkus-app", "quarkus-run.jar");
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(2);

    private final Process process;
    private final int port;
    private final Path log;

    private ServalProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * The default MiniLM's result cache off: the benchmarks measure the compute path, and they cycle through a few
     * thousand texts, which a cache would answer from memory after the first lap. This build's
     * {@link #start(List, Path)} puts it first (a later {@code cache=on} among the caller's arguments wins, as
     * {@code CacheBenchmark}'s cache-on server does); another build's ({@link #start(List, Path, Path)}) is started
     * as given, since a build from before the cache refuses the property.
     */
    public static final String CACHE_OFF = "-Dserval.deployments.all-minilm-l6-v2.cache=off";

    /**
     * Starts this build's Serval with {@code jvmArguments} (system properties such as
     * {@code -Dserval.deployments.noop.model=noop}, or JVM flags) before {@code -jar}, the default MiniLM's result cache
     * off unless they turn it on ({@link #CACHE_OFF}), and waits until it is ready.
     *
     * @throws IllegalStateException if the jar is missing, or Serval exits or is not ready within two minutes
     *                               (the message names the log)
     */
    public static ServalProcess start(List<String> jvmArguments, Path log) throws IOException, InterruptedException {
        List<String> arguments = new ArrayList<>(List.of(CACHE_OFF));
        arguments.addAll(jvmArguments);
        return start(arguments, JAR, log);
    }

    /** {@link #start(List, Path)} with another build's {@code quarkus-run.jar}. */
    public static ServalProcess start(List<String> jvmArguments, Path jar, Path log)
            throws IOException, InterruptedException {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar.toAbsolutePath() + " is missing: build it with "
                    + "./mvnw -q -B -DskipTests package -pl platform-api,platform-bench -am (from the repository root)");
        }
        int port = freeLoopbackPort();
        List<String> command = new ArrayList<>(List.of(ChildProcess.javaBinary(), "--enable-native-access=ALL-UNNAMED",
                "-Dai.djl.offline=true", "-DOPT_OUT_TRACKING=true", "-Dai.djl.default_engine=OnnxRuntime",
                "-Dquarkus.http.host=127.0.0.1", "-Dquarkus.http.port=" + port));
        command.addAll(jvmArguments);
        command.addAll(List.of("-jar", jar.toString()));
        Files.createDirectories(log.toAbsolutePath().getParent());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("DJL_OFFLINE", "true");
        builder.environment().put("OPT_OUT_TRACKING", "true");
        builder.environment().put("ORT_DISABLE_TELEMETRY", "1");
        // As bin/serval and the image launch it (docs/kubernetes.md, Memory); a value in this environment wins
        builder.environment().putIfAbsent("MALLOC_ARENA_MAX", "2");
        ServalProcess serval = new ServalProcess(builder.start(), port, log);
        try {
            serval.awaitReady();
        } catch (RuntimeException | InterruptedException e) {
            serval.close();
            throw e;
        }
        return serval;
    }

    /** A TCP port that was free on 127.0.0.1 a moment ago. */
    public static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private void awaitReady() throws InterruptedException {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (!ready(client)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Serval exited with " + process.exitValue() + "; see " + log);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Serval not ready after " + READY_TIMEOUT + "; see " + log);
            }
            Thread.sleep(200); // polling a process we started: there is nothing else to wait on
        }
    }

    private boolean ready(HttpClient client) throws InterruptedException {
        try {
            HttpRequest request = HttpRequest.newBuilder(uri("/v2/health/ready")).timeout(Duration.ofSeconds(2)).build();
            return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /** {@code http://127.0.0.1:<port><path>}. */
    public URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Override
    public void close() throws InterruptedException {
        ChildProcess.stop(process);
    }
}
