package dev.serval.bench.load;

import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * CPU profiles of the server under test, one per measured run: async-profiler (the {@code tools.profiler:async-profiler}
 * jar on this class path ships its native agent) is loaded into the server's JVM through the Attach API, started
 * when a run's measurement window opens and stopped when it closes, writing a flame graph ({@code .html}) and
 * collapsed stacks ({@code .collapsed}, one line per stack with its sample count, for grep and scripts). The server
 * should run with {@code -XX:+EnableDynamicAgentLoading} so that the JVM does not warn. Linux x64 and arm64 only.
 * Used by one thread.
 */
final class Profiler {

    private final long pid;
    private final Path library;
    private final Path out;

    private Profiler(long pid, Path library, Path out) {
        this.pid = pid;
        this.library = library;
        this.out = out;
    }

    /** A profiler for process {@code pid}, writing into {@code out}; extracts the agent there. */
    static Profiler of(long pid, Path out) throws IOException {
        String platform = System.getProperty("os.arch").contains("aarch64") ? "linux-arm64" : "linux-x64";
        Path library = out.toAbsolutePath().resolve("libasyncProfiler.so");
        try (InputStream agent = Profiler.class.getClassLoader().getResourceAsStream(platform + "/libasyncProfiler.so")) {
            if (agent == null) {
                throw new IllegalStateException("async-profiler's " + platform + " agent is not on the class path");
            }
            Files.copy(agent, library, StandardCopyOption.REPLACE_EXISTING);
        }
        return new Profiler(pid, library, out.toAbsolutePath());
    }

    /** Starts sampling CPU time every millisecond (wall-clock-independent: idle threads are not sampled). */
    void start() throws IOException {
        command("start,event=cpu,interval=1ms");
    }

    /** Stops sampling and writes {@code name.html} and {@code name.collapsed}. */
    void stop(String name) throws IOException {
        command("stop,file=" + out.resolve(name + ".collapsed") + ",collapsed");
        command("dump,file=" + out.resolve(name + ".html"));
    }

    private void command(String arguments) throws IOException {
        try {
            VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try {
                vm.loadAgentPath(library.toString(), arguments);
            } finally {
                vm.detach();
            }
        } catch (AttachNotSupportedException | AgentLoadException | AgentInitializationException e) {
            throw new IOException("async-profiler '" + arguments + "' failed on process " + pid, e);
        }
    }
}
