package dev.serval.bench.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Serval's soak (issue 14): a long open-loop run at 80 % of its measured saturation, sampled every interval, to
 * find what only time shows: failed requests, latency that drifts, heap or native memory that grows.
 *
 * <p>The packaged Serval ({@link ServalProcess}) runs its default configuration (the default MiniLM deployment,
 * batch-invariant, queue 256); from this JVM, with {@link LoadGenerator} and one short chat-like text per OIP
 * request:
 *
 * <ol>
 *   <li>JIT warm-up: an unrecorded closed loop of 16 connections;</li>
 *   <li>saturation: the better of closed loops of 4 and 16 connections, in texts/s;</li>
 *   <li>the soak: one open loop at 80 % of it ({@code --fraction}) for {@code --duration} (10 minutes by default),
 *       latency from each request's intended send time, on the same bounded keep-alive pool as the other load
 *       benchmarks. Every {@code --interval} (10 s) this thread reads what completed in the interval
 *       ({@link IntervalLog}: successes, errors, p50/p99/max), Serval's CPU share, then forces a full GC in Serval
 *       and reads the heap just after it ({@link RemoteHeap}: the remote {@code MemoryMXBean.gc()} through JMX,
 *       which is {@code System.gc()}, a stop-the-world collection with G1), Serval's {@code VmRSS} and thread count
 *       from {@code /proc/<pid>/status}. One reading is also taken just before the load starts.</li>
 * </ol>
 *
 * <p>The goals ({@link SoakGoals}): no failed request; heap after GC and RSS flat, the slope of the least-squares
 * line over the second half at most 0.5 and 2 MB/min. The forced GC's pause (reported per sample) is inside the next
 * interval's latencies: a constant cost per interval, which adds to every interval's p99 alike and so hides no
 * drift.
 *
 * <p>Output in {@code platform-bench/target/soak/} (or {@code --out DIR}): {@code report.json}, {@code summary.md}
 * (goals, then every sample), {@code memory.png} and {@code latency.png} against time, and Serval's log. Run from the
 * repository root (about 11 minutes; {@code --quick}: a 1-minute soak, about 90 s in all, a sanity check whose
 * slopes mean little):
 * <pre>{@code
 * bin/loadbench --soak [--quick] [--duration 10m] [--interval 10s] [--fraction 0.8] [--connections 512]
 *                      [--out DIR] [--serval-opt -Dkey=value]...
 * }</pre>
 * which builds if needed and runs
 * {@code java -cp platform-bench/target/benchmarks.jar dev.serval.bench.load.SoakBenchmark [options]}.
 */
public final class SoakBenchmark {

    static final String DEPLOYMENT = LoadBenchmark.MINILM_DEPLOYMENT;
    private static final double MB = 1 << 20;

    /**
     * How long each phase is.
     *
     * @param preWarm    the closed loop of 16 connections that warms the JIT
     * @param warmUp     the unrecorded start of each saturation run
     * @param saturation each saturation run's window
     * @param duration   the soak's length
     * @param interval   how often it is sampled
     * @param fraction   the soak's rate as a fraction of saturation
     * @param drain      how long the soak waits for answers after its last request
     */
    record Settings(String mode, Duration preWarm, Duration warmUp, Duration saturation, Duration duration,
            Duration interval, double fraction, int connections, Duration drain) {

        static Settings quick() {
            return new Settings("quick", Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ofSeconds(3),
                    Duration.ofMinutes(1), Duration.ofSeconds(10), 0.8, 512, Duration.ofSeconds(10));
        }

        static Settings full() {
            return new Settings("full", Duration.ofSeconds(20), Duration.ofSeconds(2), Duration.ofSeconds(10),
                    Duration.ofMinutes(10), Duration.ofSeconds(10), 0.8, 512, Duration.ofSeconds(10));
        }

        Settings with(Duration duration, Duration interval, double fraction, int connections) {
            return new Settings(mode, preWarm, warmUp, saturation, duration, interval, fraction, connections, drain);
        }
    }

    /**
     * One sample: the interval that ended at {@code minutes} (latencies in ms from the intended start; NaN without
     * successes) and Serval's state just after it.
     */
    record Row(double minutes, long successes, Map<String, Long> errors, double p50, double p99, double max,
            double servalCpu, double otherCpu, double heapAfterGcMb, double heapCommittedMb, double nonHeapMb,
            double rssMb, long threads, double gcMillis) {

        SoakGoals.Sample sample() {
            return new SoakGoals.Sample(minutes, errors.values().stream().mapToLong(Long::longValue).sum(), p99,
                    heapAfterGcMb, rssMb, rssMb - heapCommittedMb, threads);
        }
    }

    private SoakBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, "usage: bin/loadbench --soak [--quick] [--duration 10m] [--interval 10s] [--fraction 0.8] "
                        + "[--connections 512] [--out DIR] [--serval-opt -Dkey=value]...", Set.of("--quick"),
                Set.of("--duration", "--interval", "--fraction", "--connections", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Settings settings = arguments.contains("--quick") ? Settings.quick() : Settings.full();
        settings = settings.with(Options.duration(arguments, "--duration", settings.duration()),
                Options.duration(arguments, "--interval", settings.interval()),
                Double.parseDouble(Options.value(arguments, "--fraction", Double.toString(settings.fraction()))),
                Integer.parseInt(Options.value(arguments, "--connections", Integer.toString(settings.connections()))));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/soak"));
        Files.createDirectories(out);
        run(settings, out, Options.servalOptions(args));
    }

    private static void run(Settings settings, Path out, List<String> servalArguments) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        Map<String, Object> commit = Options.commit(); // before the run: what the jar was built from, not later edits
        System.out.printf("Serval soak, %s mode: %.0f %% of saturation for %s, sampled every %s; %d CPUs, load "
                        + "average %s, Java %s%n", settings.mode(), settings.fraction() * 100,
                Options.human(settings.duration()), Options.human(settings.interval()),
                Runtime.getRuntime().availableProcessors(), loadBefore, System.getProperty("java.version"));
        Workload workload = Workload.texts(LoadBenchmark.MINILM_SHORT, DEPLOYMENT,
                ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
        List<Row> rows = new ArrayList<>();
        List<RunResult> saturationRuns = new ArrayList<>();
        RunResult soak;
        double saturation;
        try (LoadGenerator generator = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(servalArguments, out.resolve("serval.log"));
                RemoteHeap heap = RemoteHeap.attach(serval.pid())) {
            System.out.printf("Serval ready on port %d (pid %d; log %s)%n", serval.port(), serval.pid(), serval.log());
            LoadBenchmark.Target target = new LoadBenchmark.Target(LoadBenchmark.SERVAL, serval.port(), serval.pid());
            RunResult warm = generator.closedLoop(target.name(), target.port(), target.pid(), workload, 16,
                    Duration.ofMillis(100), settings.preWarm(), settings.drain());
            print("warm-up, closed 16 (unrecorded)", warm);
            for (int connections : List.of(4, 16)) {
                RunResult run = generator.closedLoop(target.name(), target.port(), target.pid(), workload, connections,
                        settings.warmUp(), settings.saturation(), settings.drain());
                print("saturation, closed " + connections, run);
                saturationRuns.add(run);
            }
            saturation = saturationRuns.stream().mapToDouble(RunResult::throughput).max().orElseThrow();
            double rate = settings.fraction() * saturation;
            System.out.printf("  saturation %.1f texts/s; soak at %.1f/s for %s%n", saturation, rate,
                    Options.human(settings.duration()));

            rows.add(sample(0, new IntervalLog.Interval(0, Map.of(), Double.NaN, Double.NaN, Double.NaN),
                    new MachineUsage.Shares(0, 0, 0), heap.afterFullGc(), serval.pid()));
            print(rows.getLast());
            IntervalLog intervals = new IntervalLog();
            long loadStart = System.nanoTime();
            CompletableFuture<RunResult> running = new CompletableFuture<>();
            Thread.ofPlatform().name("soak-run").daemon().start(() -> {
                try {
                    running.complete(generator.openLoop(target.name(), target.port(), target.pid(), workload, rate,
                            settings.connections(), Duration.ZERO, settings.duration(), settings.drain(), intervals));
                } catch (Exception | Error e) {
                    running.completeExceptionally(e);
                }
            });
            MachineUsage.Sample cpuBefore = MachineUsage.sample(serval.pid());
            long samples = settings.duration().toNanos() / settings.interval().toNanos();
            for (long k = 1; k <= samples && !running.isDone(); k++) {
                long wait = loadStart + k * settings.interval().toNanos() - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(Duration.ofNanos(wait)); // the run goes on on the generator's event loop
                }
                IntervalLog.Interval interval = intervals.take();
                MachineUsage.Sample cpuNow = MachineUsage.sample(serval.pid());
                MachineUsage.Shares cpu = cpuNow.sharesSince(cpuBefore);
                rows.add(sample((System.nanoTime() - loadStart) / 60e9, interval, cpu, heap.afterFullGc(),
                        serval.pid()));
                cpuBefore = MachineUsage.sample(serval.pid());
                print(rows.getLast());
            }
            try {
                soak = running.get(settings.duration().toSeconds() + settings.drain().toSeconds() + 120,
                        TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("the soak run failed", e.getCause());
            }
            System.out.printf("  soak: %.1f texts/s of %.1f offered, %d ok, errors %s, p50 %.2f p99 %.2f p99.9 %.2f max "
                            + "%.1f ms%n", soak.throughput(), soak.offeredRate(), soak.successes(),
                    soak.errors().isEmpty() ? "0" : soak.errors(), soak.p50(), soak.p99(), soak.p999(), soak.max());
        }
        List<SoakGoals.Verdict> verdicts = SoakGoals.evaluate(rows.stream().map(Row::sample).toList(),
                soak.errorCount());
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-soak");
        report.put("mode", settings.mode());
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", commit);
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("settings", settings);
        report.put("serval", Map.of("arguments", servalArguments, "deployment", DEPLOYMENT));
        report.put("heapAfterGc", "remote MemoryMXBean.gc() (System.gc(), a full G1 collection) through JMX, then "
                + "MemoryMXBean.getHeapMemoryUsage().used; RSS and threads from /proc/<pid>/status");
        report.put("saturationRuns", saturationRuns);
        report.put("saturation", saturation);
        report.put("soak", soak);
        report.put("samples", rows);
        report.put("goals", verdicts);
        SoakReport.write(out, report, settings, saturation, soak, rows, verdicts);
        System.out.println("Report: " + out.resolve("summary.md") + ", " + out.resolve("report.json") + " ("
                + Math.round((System.nanoTime() - startedNanos) / 1e9) + " s)");
    }

    private static Row sample(double minutes, IntervalLog.Interval interval, MachineUsage.Shares cpu,
            RemoteHeap.Reading heap, long pid) {
        return new Row(minutes, interval.successes(), interval.errors(), interval.p50(), interval.p99(), interval.max(),
                cpu.server(), cpu.other(), heap.heapUsed() / MB, heap.heapCommitted() / MB, heap.nonHeapUsed() / MB,
                MachineUsage.residentBytes(pid) / MB, MachineUsage.threads(pid), heap.gcMillis());
    }

    private static void print(String what, RunResult run) {
        System.out.printf("  %-34s %8.1f texts/s  p50 %7.2f  p99 %8.2f ms  errors %s  cpu gen/serval/other "
                        + "%.2f/%.2f/%.2f%n", what, run.throughput(), run.p50(), run.p99(),
                run.errors().isEmpty() ? "0" : run.errors(), run.cpu().generator(), run.cpu().server(),
                run.cpu().other());
    }

    private static void print(Row row) {
        System.out.printf("  %5.2f min: %6d ok, errors %s, p50 %6.2f p99 %7.2f max %7.1f ms; cpu serval %.2f other "
                        + "%.2f; heap after GC %.1f MB (GC %.0f ms), non-heap %.1f MB, RSS %.1f MB, %d threads%n",
                row.minutes(), row.successes(), row.errors().isEmpty() ? "0" : row.errors(), row.p50(), row.p99(),
                row.max(), row.servalCpu(), row.otherCpu(), row.heapAfterGcMb(), row.gcMillis(), row.nonHeapMb(),
                row.rssMb(), row.threads());
    }
}
