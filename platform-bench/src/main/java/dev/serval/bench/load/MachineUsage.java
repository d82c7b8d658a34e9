package dev.serval.bench.load;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who used the cores during a measurement, from Linux's {@code /proc}: this JVM (the load generator), the server
 * under test, and everything else on the machine (other users of a shared machine show up there). A
 * {@link Sample} is a reading of the counters; {@link Sample#sharesSince} turns two readings into shares of all
 * cores. Also the server's resident memory and thread count ({@code /proc/<pid>/status}). Off Linux the /proc
 * figures read as 0. Stateless; thread-safe.
 */
public final class MachineUsage {

    /** USER_HZ: Linux reports /proc CPU times in hundredths of a second. */
    private static final long NANOS_PER_TICK = 10_000_000L;

    private MachineUsage() {
    }

    /** Fractions of all cores' time over an interval (1.0 = every core busy throughout). */
    /** CPU microseconds per answered request of a process that had {@code share} of every core at {@code rate}. */
    static double microsPerRequest(double share, double rate) {
        return share * Runtime.getRuntime().availableProcessors() * 1e6 / rate;
    }

    public record Shares(double generator, double server, double other) {
    }

    /** CPU counters at one instant, in nanoseconds. */
    record Sample(long atNanos, long generatorCpu, long serverCpu, long machineBusy) {

        Shares sharesSince(Sample start) {
            double available = (double) (atNanos - start.atNanos) * Runtime.getRuntime().availableProcessors();
            long generator = generatorCpu - start.generatorCpu;
            long server = serverCpu - start.serverCpu;
            long other = Math.max(0, machineBusy - start.machineBusy - generator - server);
            return new Shares(round(generator / available), round(server / available), round(other / available));
        }

        private static double round(double share) {
            return Math.round(share * 1000) / 1000.0;
        }
    }

    static Sample sample(long serverPid) {
        return new Sample(System.nanoTime(), generatorCpu(), processCpu(serverPid), machineBusy());
    }

    /** CPU time of this JVM (the load generator), in nanoseconds. */
    public static long generatorCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** User + system time of process {@code pid}, in nanoseconds; 0 where /proc is missing. */
    public static long processCpu(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * NANOS_PER_TICK; // utime, stime
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Busy time of all cores (everything but idle and iowait) since boot; 0 where /proc is missing. */
    static long machineBusy() {
        try {
            String[] fields = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < Math.min(fields.length, 9); i++) { // user nice system idle iowait irq softirq steal
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(fields[i]);
                }
            }
            return busy * NANOS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Resident memory of process {@code pid} ({@code VmRSS}), in bytes; 0 where /proc is missing. */
    public static long residentBytes(long pid) {
        return statusField(pid, "VmRSS:") * 1024; // the kernel writes it in kB
    }

    /** Threads of process {@code pid}; 0 where /proc is missing. */
    public static long threads(long pid) {
        return statusField(pid, "Threads:");
    }

    /** The first number on the line of {@code /proc/<pid>/status} that starts with {@code field}; 0 if absent. */
    private static long statusField(long pid, String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        return 0;
    }

    /** The 1-, 5- and 15-minute load averages, as /proc/loadavg prints them; "" where it is missing. */
    static String loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
