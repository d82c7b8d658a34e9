package dev.serval.bench.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A main class of this benchmark jar run in a child JVM (the same {@code java}, the same class path, DJL offline,
 * native access on), talking to its parent by lines on its standard output: a line starting with a given marker
 * carries the answer, every other line is echoed with an indent. Used for the parts of the load benchmark that
 * must not share a JVM with the load generator: the bare transport-limit server and the raw DJL loop.
 */
final class ChildJvm {

    /**
     * The flags every child gets: DJL offline and on ONNX Runtime, native access for ONNX Runtime, and (JDK 23+)
     * sun.misc.Unsafe memory access allowed for Netty without a warning.
     */
    static final List<String> FLAGS = flags();

    private ChildJvm() {
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

    /** Starts {@code mainClass} with {@code arguments}; standard error is inherited. */
    static Process start(Class<?> mainClass, List<String> jvmFlags, List<String> arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(FLAGS);
        command.addAll(jvmFlags);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put("DJL_OFFLINE", "true");
        builder.environment().put("OPT_OUT_TRACKING", "true");
        return builder.start();
    }

    /**
     * Reads {@code process}'s output until a line starts with {@code marker} and returns the rest of that line;
     * other lines are echoed. Throws if the output ends first.
     */
    static String awaitLine(Process process, String marker) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith(marker)) {
                String answer = line.substring(marker.length()).trim();
                Thread.ofVirtual().start(() -> echo(out)); // keep draining, so the child never blocks on a full pipe
                return answer;
            }
            System.out.println("    | " + line);
        }
        throw new IllegalStateException("child exited without a '" + marker + "' line (exit code "
                + exitCode(process) + ")");
    }

    private static void echo(BufferedReader out) {
        try {
            String line;
            while ((line = out.readLine()) != null) {
                System.out.println("    | " + line);
            }
        } catch (IOException e) {
            // the child is gone; nothing left to echo
        }
    }

    private static String exitCode(Process process) {
        try {
            return process.waitFor(10, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /** SIGTERM, then SIGKILL if the process has not exited after 30 s. */
    static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
