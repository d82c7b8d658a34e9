package dev.serval.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process talking to its parent by lines: the parent writes commands to its standard input
 * ({@link #send}), and waits for a line of its standard output that starts with a given marker
 * ({@link #awaitLine}); every other line is echoed with an indent. Used for the parts of the load benchmark that
 * must not share a JVM with the load generator: the bare transport-limit server and the raw DJL loop (main classes
 * of this benchmark jar in a child JVM, {@link #startJvm}: the same {@code java}, the same class path, DJL offline,
 * native access on), and the raw Python onnxruntime loop ({@link #start}).
 *
 * <p>Threading: one reader thread per child moves its output lines into {@link #lines} (so the child never blocks
 * on a full pipe); the owning thread does everything else.
 */
final class ChildProcess implements AutoCloseable {

    /**
     * The flags every child gets: DJL offline and on ONNX Runtime, native access for ONNX Runtime, and (JDK 23+)
     * sun.misc.Unsafe memory access allowed for Netty without a warning.
     */
    static final List<String> FLAGS = flags();
    private static final String END = "\u0000end of output";

    private final Process process;
    private final Writer input;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private ChildProcess(Process process) {
        this.process = process;
        this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Thread.ofPlatform().daemon().name("child-" + process.pid() + "-output").start(() -> {
            try {
                String line;
                while ((line = output.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the child is gone
            }
            lines.add(END);
        });
    }

    private static List<String> flags() {
        List<String> flags = new ArrayList<>(List.of("--enable-native-access=ALL-UNNAMED", "-Dai.djl.offline=true",
                "-DOPT_OUT_TRACKING=true", "-Dai.djl.default_engine=OnnxRuntime"));
        if (Runtime.version().feature() >= 23) {
            flags.add("--sun-misc-unsafe-memory-access=allow");
        }
        return List.copyOf(flags);
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Starts {@code mainClass} of this class path in a child JVM with {@code arguments}; standard error is inherited. */
    static ChildProcess startJvm(Class<?> mainClass, List<String> arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(FLAGS);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(arguments);
        return start(command);
    }

    /** Starts {@code command} (DJL offline in its environment); standard error is inherited. */
    static ChildProcess start(List<String> command) throws IOException {
        return start(command, Map.of());
    }

    /** {@link #start(List)} with {@code environment} added to the child's environment. */
    static ChildProcess start(List<String> command, Map<String, String> environment) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put("DJL_OFFLINE", "true");
        builder.environment().put("OPT_OUT_TRACKING", "true");
        builder.environment().put("ORT_DISABLE_TELEMETRY", "1");
        builder.environment().putAll(environment);
        return new ChildProcess(builder.start());
    }

    long pid() {
        return process.pid();
    }

    /** Writes {@code command} as one line to the child's standard input. */
    void send(String command) throws IOException {
        input.write(command + "\n");
        input.flush();
    }

    /**
     * Waits up to {@code timeout} for a line starting with {@code marker} and returns the rest of it; lines before it
     * are echoed. Throws if the child's output ends or the time runs out first.
     */
    String awaitLine(String marker, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new IllegalStateException("no '" + marker + "' line from child " + pid() + " within " + timeout);
            }
            if (line.equals(END)) {
                throw new IllegalStateException("child " + pid() + " ended without a '" + marker + "' line (exit code "
                        + (process.waitFor(10, TimeUnit.SECONDS) ? process.exitValue() : "unknown") + ")");
            }
            if (line.startsWith(marker)) {
                return line.substring(marker.length()).trim();
            }
            System.out.println("    | " + line);
        }
    }

    /** SIGTERM to the child and its descendants, then SIGKILL if the child has not exited after 30 s. */
    @Override
    public void close() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroy);
        stop(process);
    }

    /** The child and its descendants (a Python loop's worker processes), forcibly, at once: for a shutdown hook. */
    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /** SIGTERM, then SIGKILL if {@code process} has not exited after 30 s. */
    static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
