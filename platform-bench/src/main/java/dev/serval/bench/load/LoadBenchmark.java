package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.model.ModelFiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Serval's HTTP load benchmark, with the machine's limits measured in the same run by the same client, so that
 * every Serval figure is reported as a ratio of what this machine allows:
 *
 * <ul>
 *   <li>{@code noop}: the {@code noop} model (answers its input tensors unchanged) with a small OIP JSON request,
 *       against the <em>transport limit</em>: a bare Vert.x server ({@link BareServer}) answering the same request
 *       with the same status, headers and body, captured from Serval.</li>
 *   <li>{@code minilm-short}: the default model (quantised all-MiniLM-L6-v2), one short chat-like text of 5-30
 *       words per OIP request, against the <em>compute limits</em> ({@link RawSweep}): a raw in-process DJL loop
 *       ({@link RawEmbeddingLoop}) and a raw Python onnxruntime loop ({@link PythonRawLoop}, at the Java runtime's
 *       onnxruntime version and at the newest) over the same texts, swept over thread splits and batch sizes; the
 *       DJL loop's best batch size at Serval's split (2 predictors of 1 intra-op thread) is Serval's max-batch-size.
 *       </li>
 *   <li>{@code minilm-mixed}: the same with 1 % of the texts over 300 words.</li>
 *   <li>{@code minilm-fp32-short}: the short texts on the fp32 all-MiniLM-L6-v2 (rows independent, so Serval batches
 *       it with batch invariance on, as shipped: {@code max_batch_size} 32), against the DJL loop over length-sorted
 *       batches of that model at its best batch size at Serval's split, found by a sweep of sizes 1-32 in the same
 *       run.</li>
 * </ul>
 *
 * <p>Each target is driven by {@link LoadGenerator} from this JVM: closed loops over a few connection counts (the
 * highest throughput is the saturation rate; one connection gives the single-request latency), then open loops at
 * fixed fractions of Serval's saturation rate, latency measured from each request's intended send time. The noop
 * workload runs the bare server at the same absolute rates as Serval, alternating with it run by run so that
 * background noise falls on both. Serval, the bare server and each raw loop run in their own child process; all
 * traffic is on 127.0.0.1; every phase is bounded in time, and the children are stopped at the end (or if this JVM
 * is interrupted).
 *
 * <p>Output, in {@code platform-bench/target/loadbench/} (or {@code --out DIR}): {@code report.json} with every
 * figure and the settings, machine and JVM; {@code summary.md}, the goals as ratios and every run in a table; one
 * PNG per workload, latency percentiles against offered load (XChart). With {@code --profile}, async-profiler CPU
 * profiles of Serval during the saturation run and the goal's open-loop run of each workload
 * ({@code profile-*.html} flame graphs and {@code profile-*.collapsed} stacks); with {@code --jfr}, a JFR recording
 * of Serval's whole life ({@code serval.jfr}).
 *
 * <p>Run from the repository root (full: about 24 minutes on two cores; {@code --quick}: about 2.5 minutes, plus
 * the venvs' first installation):
 * <pre>{@code
 * bin/loadbench [--quick] [--workloads noop,minilm-short,minilm-mixed,minilm-fp32-short] [--profile] [--jfr] [--out DIR]
 *               [--serval-opt -Dkey=value]... [--python python3 | --no-python] [--python-dir DIR]
 *               [--serval-jar PATH]
 * }</pre>
 * which builds if needed and then runs
 * {@code java -cp platform-bench/target/benchmarks.jar dev.serval.bench.load.LoadBenchmark [options]}.
 */
public final class LoadBenchmark {

    static final String NOOP = "noop";
    static final String MINILM_SHORT = "minilm-short";
    static final String MINILM_MIXED = "minilm-mixed";
    /** The short texts on the fp32 MiniLM, batched as shipped; not in the default set of workloads. */
    static final String MINILM_FP32_SHORT = "minilm-fp32-short";
    /** The fp32 MiniLM's deployment (and model, in the run's own repository). */
    static final String FP32_DEPLOYMENT = "minilm-fp32";
    static final String SERVAL = "serval";
    static final String BARE = "bare-vertx";
    /** The bare server with Serval's own number of event loops (fewer than Vert.x's default two per core). */
    static final String BARE_SERVAL_LOOPS = "bare-vertx-serval-loops";
    /** The limits' key of the raw batch-1 figures measured around Serval's default configuration (a RawLimits). */
    static final String RAW_AROUND_DEFAULT = "rawAroundDefault";
    /** The default deployment, serving the default model. */
    static final String MINILM_DEPLOYMENT = "all-minilm-l6-v2";
    /** Predictor threads in Serval, each with one intra-op thread. */
    static final int THREADS = 2;
    /** Serval's thread split: {@link #THREADS} predictors x 1 intra-op thread. */
    static final RawLimits.Split SERVAL_SPLIT = new RawLimits.Split(THREADS, 1);

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How long and how wide each phase is.
     *
     * @param preWarm           the unrecorded closed loop before each target's first run of a workload (MiniLM: in
     *                          the full mode long enough that C2 is done with Serval's request path; with 5 s, JIT
     *                          compilation was still 10-12 % of Serval's CPU in the last MiniLM run at saturation)
     * @param preWarmNoop       the same on noop, longer: at tens of thousands of requests per second the HTTP path
     *                          is all there is to run, and C2 needs seconds of it on two busy cores to compile it
     *                          (with 2 s, the first noop figures of Serval and of the bare server were halved)
     * @param openFractions      fractions of Serval's saturation rate offered in noop's open-loop runs
     * @param openFractionsTexts the same for the MiniLM workloads
     * @param rawBatchesShort the raw loops' batch sizes on the short texts, every runtime (the DJL loop's best at
     *                        Serval's split becomes Serval's)
     * @param rawBatchesMixed the DJL loop's batch sizes on the mixed texts at Serval's split (reported only; may be
     *                        empty)
     * @param rawBatchesFp32  the DJL loop's batch sizes with the fp32 model on the short texts at Serval's split: its
     *                        best is the fp32 workload's limit
     * @param rawWarmUp       the raw loops' warm-up before each throughput measurement
     * @param rawMeasure      each raw throughput measurement
     * @param rawPasses       passes over the raw configurations; each keeps its best pass
     * @param rawBothSplits   sweep throughput at N x 1 and 1 x N (N cores; and Serval's split); otherwise at Serval's
     *                        split only
     * @param rawSingleCalls  single-text latency calls per raw runtime, split and pass (after a tenth as many to warm
     *                        up), at 1 x 1 and 1 x N
     * @param bareTexts       also run the bare server on the MiniLM short workload (embedding-sized answers)
     * @param defaultConfig   also measure Serval's default (batch-invariant) configuration against the raw loop's
     *                        batch size 1
     */
    record Settings(String mode, Duration preWarm, Duration preWarmNoop, Duration warmUp, Duration measure,
            Duration drain,
            List<Integer> noopConnections, List<Integer> textConnections, List<Double> openFractions,
            List<Double> openFractionsTexts,
            int openMaxConnectionsNoop, int openMaxConnectionsTexts, List<Integer> rawBatchesShort,
            List<Integer> rawBatchesMixed, List<Integer> rawBatchesFp32, Duration rawWarmUp, Duration rawMeasure, int rawPasses,
            boolean rawBothSplits, int rawSingleCalls, boolean bareTexts, boolean defaultConfig) {

        static Settings quick() {
            return new Settings("quick", Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(1),
                    Duration.ofSeconds(2),
                    Duration.ofSeconds(5), List.of(1, 32), List.of(1, 64), List.of(0.5, 0.7, 0.9), List.of(0.5, 0.7), 64, 256,
                    List.of(1, 32), List.of(), List.of(1, 4, 8, 16, 32), Duration.ofSeconds(1), Duration.ofSeconds(2), 1, false, 300, false, false);
        }

        static Settings full() {
            return new Settings("full", Duration.ofSeconds(20), Duration.ofSeconds(15), Duration.ofSeconds(3),
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(10), List.of(1, 4, 16, 64), List.of(1, 16, 64, 128),
                    List.of(0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1), List.of(0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1),
                    64, 256, List.of(1, 2, 4, 8, 16, 32),
                    List.of(1, 8, 16, 32), List.of(1, 2, 4, 8, 12, 16, 24, 32), Duration.ofMillis(1500), Duration.ofSeconds(4), 2, true, 1000, true, true);
        }
    }

    private LoadBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, """
                usage: bin/loadbench [--quick] [--workloads noop,minilm-short,minilm-mixed,minilm-fp32-short] [--out DIR]
                                     [--jfr] [--profile]
                                     [--python python3 | --no-python] [--python-dir DIR] [--serval-opt -Dkey=value]...
                                     [--serval-jar PATH (another build's quarkus-run.jar)]
                       bin/loadbench --overload | --soak | --autoscaling [their options; --help for each]""",
                Set.of("--quick", "--jfr", "--profile", "--no-python"),
                Set.of("--workloads", "--out", "--python", "--python-dir", "--serval-opt", "--serval-jar"));
        List<String> arguments = Arrays.asList(args);
        Settings settings = arguments.contains("--quick") ? Settings.quick() : Settings.full();
        Set<String> workloads = Set.of(option(arguments, "--workloads", NOOP + "," + MINILM_SHORT + "," + MINILM_MIXED)
                .split(","));
        Path out = Path.of(option(arguments, "--out", "platform-bench/target/loadbench"));
        boolean jfr = arguments.contains("--jfr");
        boolean profile = arguments.contains("--profile");
        List<String> servalOptions = new ArrayList<>();
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals("--serval-opt")) {
                servalOptions.add(args[i + 1]);
            }
        }
        Files.createDirectories(out);
        String python = arguments.contains("--no-python") ? null : option(arguments, "--python", "python3");
        Path pythonDir = Path.of(option(arguments, "--python-dir", "platform-bench/target/python"));
        Path jar = Path.of(option(arguments, "--serval-jar", ServalProcess.JAR.toString()));
        new LoadBenchmark.Session(settings, workloads, out, jfr, profile, servalOptions, python, pythonDir, jar).run();
    }

    private static String option(List<String> arguments, String name, String otherwise) {
        int at = arguments.indexOf(name);
        return at >= 0 && at + 1 < arguments.size() ? arguments.get(at + 1) : otherwise;
    }

    /** One benchmark run: its settings, the processes it started, and the figures so far. Used by one thread. */
    private static final class Session {

        private final Settings settings;
        private final Set<String> workloads;
        private final Path out;
        private final boolean jfr;
        private final boolean profile;
        private final List<String> servalOptions;
        /** The Serval build measured (the workloads' Serval; the default configuration's is always this build's). */
        private final Path jar;
        /** The Python interpreter that makes the venvs, or null to measure no Python limit. */
        private final String python;
        private final Path pythonDir;
        private final List<RunResult> runs = new ArrayList<>();
        /** Every child JVM started, for the shutdown hook. */
        private final List<ChildProcess> children = new ArrayList<>();
        private final Map<String, Object> limits = new LinkedHashMap<>();
        /**
         * Raw loop texts/s at Serval's batch size, measured just before and just after each text workload's closed
         * loops; the better of the two is the limit (outside disturbances only ever lower a figure).
         */
        private final Map<String, Object> rawInterleaved = new LinkedHashMap<>();
        private final Map<String, Object> servalConfig = new LinkedHashMap<>();
        private final long startedNanos = System.nanoTime();
        /** The raw loops, while the text workloads run. */
        private RawSweep raw;
        /** Set once Serval runs, when profiling. */
        private Profiler profiler;
        /** How the load generator ran, for the report. */
        private final Map<String, Object> generatorInfo = new LinkedHashMap<>();

        Session(Settings settings, Set<String> workloads, Path out, boolean jfr, boolean profile,
                List<String> servalOptions, String python, Path pythonDir, Path jar) {
            this.jar = jar;
            this.settings = settings;
            this.python = python;
            this.pythonDir = pythonDir;
            this.workloads = workloads;
            this.out = out;
            this.jfr = jfr;
            this.profile = profile;
            this.servalOptions = servalOptions;
        }

        void run() throws Exception {
            String loadBefore = MachineUsage.loadAverage();
            Instant started = Instant.now();
            System.out.printf("Serval load benchmark, %s mode: %s; %d CPUs, load average %s, Java %s%n",
                    settings.mode(), workloads, Runtime.getRuntime().availableProcessors(), loadBefore,
                    System.getProperty("java.version"));
            Thread cleanup = new Thread(() -> children.forEach(ChildProcess::kill));
            Runtime.getRuntime().addShutdownHook(cleanup);
            boolean texts = workloads.contains(MINILM_SHORT) || workloads.contains(MINILM_MIXED);
            boolean fp32 = workloads.contains(MINILM_FP32_SHORT);
            int batch = 1;
            int fp32Batch = 1;
            if (texts || fp32) {
                // Python runs the quantised model only: without its workloads, no Python loop
                raw = RawSweep.start(texts ? python : null, pythonDir, Math.max(THREADS, cores()), this::child);
            }
            if (texts) {
                batch = rawSweep();
            }
            if (fp32) {
                fp32Batch = fp32Sweep();
            }
            try (LoadGenerator generator = new LoadGenerator();
                    ServalProcess server = ServalProcess.start(servalArguments(batch, texts, fp32), jar, out.resolve("serval.log"))) {
                System.out.printf("Serval ready on port %d (pid %d; log %s)%n", server.port(), server.pid(), server.log());
                generatorInfo.put("client", "Vert.x " + versionOf("io.vertx", "vertx-core") + " HTTP/1.1 client, 1 event loop");
                generatorInfo.put("transport", generator.nativeTransport() ? "epoll (native)" : "NIO");
                generatorInfo.put("histograms", "HdrHistogram " + versionOf("org.hdrhistogram", "HdrHistogram")
                        + ", 3 significant digits");
                if (!generator.nativeTransport()) {
                    System.out.println("  note: no native epoll transport; open-loop timers have millisecond precision");
                }
                if (profile) {
                    profiler = Profiler.of(server.pid(), out);
                }
                Map<String, BareServer.Canned> routes = new LinkedHashMap<>();
                Workload noop = Workload.noop(NOOP);
                Workload shortTexts = Workload.texts(MINILM_SHORT, MINILM_DEPLOYMENT,
                        ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
                if (workloads.contains(NOOP)) {
                    routes.put(noop.path(), capture(server, noop));
                }
                if (settings.bareTexts() && workloads.contains(MINILM_SHORT)) {
                    routes.put(shortTexts.path(), capture(server, shortTexts));
                }
                BareJvm bareJvm = routes.isEmpty() ? null : startBare(routes, 2 * cores());
                Target bare = bareJvm == null ? null : new Target(BARE, bareJvm.port(), bareJvm.jvm().pid());
                // Serval's default event loops (platform-api's EventLoopsDefault: one per two cores).
                BareJvm servalLoopsJvm = workloads.contains(NOOP) ? startBare(routes, Math.max(1, cores() / 2)) : null;
                Target bareServalLoops = servalLoopsJvm == null ? null
                        : new Target(BARE_SERVAL_LOOPS, servalLoopsJvm.port(), servalLoopsJvm.jvm().pid());
                Target serval = new Target(SERVAL, server.port(), server.pid());
                if (workloads.contains(NOOP)) {
                    transportWorkload(generator, serval, bare, bareServalLoops, noop);
                    servalLoopsJvm.jvm().close();
                }
                if (workloads.contains(MINILM_SHORT)) {
                    computeWorkload(generator, serval, settings.bareTexts() ? bare : null, shortTexts, "short", batch,
                            settings.textConnections(), settings.openFractionsTexts());
                }
                if (workloads.contains(MINILM_MIXED)) {
                    computeWorkload(generator, serval, null, Workload.texts(MINILM_MIXED, MINILM_DEPLOYMENT,
                            ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED)), "mixed", batch,
                            settings.textConnections(), settings.openFractionsTexts());
                }
                if (fp32) {
                    computeWorkload(generator, serval, null, Workload.texts(MINILM_FP32_SHORT, FP32_DEPLOYMENT,
                            ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED)), RawEmbeddingLoop.FP32_SHORT,
                            fp32Batch, settings.textConnections(), settings.openFractionsTexts());
                }
                if (bareJvm != null) {
                    bareJvm.jvm().close();
                }
            }
            if (settings.defaultConfig() && workloads.contains(MINILM_SHORT) && batch != 1) {
                defaultConfiguration();
            }
            if (raw != null) {
                raw.close();
            }
            Runtime.getRuntime().removeShutdownHook(cleanup);
            limits.put("rawInterleaved", rawInterleaved);
            Map<String, Object> report = new LinkedHashMap<>();
            report.put("benchmark", "serval-load");
            report.put("mode", settings.mode());
            report.put("startedAt", started.toString());
            report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
            report.put("machine", Map.of("cpus", Runtime.getRuntime().availableProcessors(),
                    "loadAverageBefore", loadBefore, "loadAverageAfter", MachineUsage.loadAverage(),
                    "os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                            + System.getProperty("os.arch")));
            report.put("jvm", Map.of("version", System.getProperty("java.version"),
                    "vendor", System.getProperty("java.vendor"), "vm", System.getProperty("java.vm.name"),
                    "home", System.getProperty("java.home")));
            report.put("generator", generatorInfo);
            report.put("settings", settings);
            report.put("workloads", workloads.stream().sorted().toList());
            report.put("serval", servalConfig);
            report.put("limits", limits);
            report.put("runs", runs);
            LoadReport.write(out, report, runs, limits);
            System.out.println("Report: " + out.resolve("summary.md") + ", " + out.resolve("report.json") + " and "
                    + out + "/*.png (" + Math.round((System.nanoTime() - startedNanos) / 1e9) + " s)");
        }

        /** A library's version from its Maven metadata on the class path, or "unknown". */
        private static String versionOf(String group, String artifact) {
            try (var in = LoadBenchmark.class.getClassLoader().getResourceAsStream(
                    "META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
                java.util.Properties properties = new java.util.Properties();
                if (in != null) {
                    properties.load(in);
                }
                return properties.getProperty("version", "unknown");
            } catch (IOException e) {
                return "unknown";
            }
        }

        private ChildProcess child(ChildProcess jvm) {
            children.add(jvm);
            return jvm;
        }

        /**
         * The DJL loop at Serval's split on text set {@code set} at {@code batch} (texts/s, CPU per text): from
         * {@code measured} if it has that figure, else measured now.
         */
        private RawLimits.Rate djlRate(RawLimits measured, String set, int batch) throws Exception {
            java.util.Optional<RawLimits.Rate> rate = measured == null ? java.util.Optional.empty()
                    : measured.measured(RawLimits.DJL, set, SERVAL_SPLIT, batch);
            return rate.isPresent() ? rate.get()
                    : raw.djlRate(set, SERVAL_SPLIT, batch, settings.rawWarmUp(), settings.rawMeasure());
        }

        private static int cores() {
            return Runtime.getRuntime().availableProcessors();
        }

        /**
         * The compute limits' sweep ({@link RawSweep}): every raw runtime's single-text latency at 1 x 1 and 1 x N (N
         * cores), and its texts/s at each batch size on the short texts at N x 1 and 1 x N (quick mode: at Serval's
         * split only); the DJL loop also on the mixed texts at Serval's split. Returns the DJL loop's best batch size
         * on the short texts at Serval's split, which Serval is configured with.
         */
        private int rawSweep() throws Exception {
            int cores = cores();
            List<RawLimits.Split> splits = new ArrayList<>(List.of(SERVAL_SPLIT));
            if (settings.rawBothSplits()) {
                for (RawLimits.Split split : List.of(new RawLimits.Split(cores, 1), new RawLimits.Split(1, cores))) {
                    if (!splits.contains(split)) {
                        splits.add(split);
                    }
                }
            }
            List<RawLimits.Split> singles = cores == 1 ? List.of(new RawLimits.Split(1, 1))
                    : List.of(new RawLimits.Split(1, 1), new RawLimits.Split(1, cores));
            RawSweep.Plan plan = new RawSweep.Plan(splits, settings.rawBatchesShort(),
                    workloads.contains(MINILM_MIXED) ? settings.rawBatchesMixed() : List.of(), singles,
                    settings.rawPasses(), settings.rawWarmUp(), settings.rawMeasure(),
                    Math.max(10, settings.rawSingleCalls() / 10), settings.rawSingleCalls());
            System.out.printf("Compute limits: %s; splits %s, batch sizes %s, %d pass(es)%n", raw.runtimeNames(),
                    splits.stream().map(RawLimits.Split::label).toList(), settings.rawBatchesShort(), settings.rawPasses());
            RawLimits rawLimits = raw.sweep(plan);
            int best = rawLimits.bestBatch(RawLimits.DJL, "short", SERVAL_SPLIT).orElseThrow();
            limits.put("cores", cores);
            limits.put("raw", rawLimits);
            limits.put("djlOverPython", rawLimits.javaOverPython("short"));
            limits.put("servalBatch", Map.of("batch", best, "from", "the DJL loop's best batch size on the short texts "
                    + "at Serval's split " + SERVAL_SPLIT.label()));
            System.out.println("  Serval's max-batch-size: " + best + " (the DJL loop's best at " + SERVAL_SPLIT.label()
                    + ")");
            return best;
        }

        /**
         * The DJL loop with the fp32 model on the short texts at Serval's split, at every size of
         * {@code rawBatchesFp32} (interleaved passes, each size's best kept), merged into the run's raw limits. Returns
         * the best size, the one of the lowest process CPU per text: on a machine shared with other work a loop's
         * texts/s follows the share of the cores it is granted (docs/benchmarks/batching-fp32), its CPU per text
         * more nearly what a text costs. The fp32 workload's limit is the DJL loop at that size,
         * measured again around Serval's runs. Serval is not told it: it batches the fp32 model as shipped.
         */
        private int fp32Sweep() throws Exception {
            System.out.printf("Compute limit of %s: the DJL loop with the fp32 model at %s, batch sizes %s, %d pass(es)%n",
                    MINILM_FP32_SHORT, SERVAL_SPLIT.label(), settings.rawBatchesFp32(), settings.rawPasses());
            RawLimits fp32 = raw.sweepDjl(RawEmbeddingLoop.FP32_SHORT, SERVAL_SPLIT, settings.rawBatchesFp32(),
                    settings.rawPasses(), settings.rawWarmUp(), settings.rawMeasure());
            limits.merge("raw", fp32, (a, b) -> ((RawLimits) a).bestOf((RawLimits) b));
            limits.putIfAbsent("cores", cores());
            int best = fp32.rates().stream().filter(r -> !Double.isNaN(r.cpuMicrosPerText()))
                    .min(Comparator.comparingDouble(RawLimits.Rate::cpuMicrosPerText))
                    .map(RawLimits.Rate::batch).orElseGet(() -> fp32.bestBatch(RawLimits.DJL,
                            RawEmbeddingLoop.FP32_SHORT, SERVAL_SPLIT).orElseThrow());
            limits.put("fp32Batch", Map.of("batch", best, "from", "the DJL loop's batch size of the lowest CPU per text "
                    + "with the fp32 model on the short texts at Serval's split " + SERVAL_SPLIT.label()));
            System.out.println("  the fp32 DJL loop's best batch size (lowest CPU per text): " + best);
            return best;
        }

        private List<String> servalArguments(int batch, boolean texts, boolean fp32) throws IOException {
            String minilm = "-Dserval.deployments." + MINILM_DEPLOYMENT + ".";
            String noop = "-Dserval.deployments." + NOOP + ".";
            List<String> arguments = new ArrayList<>();
            if (workloads.contains(NOOP)) {
                arguments.addAll(List.of(noop + "model=noop", noop + "max-ongoing-requests=64",
                        noop + "max-queued-requests=1024"));
            }
            if (texts) {
                arguments.addAll(List.of(minilm + "batch-invariance=" + (batch == 1), minilm + "max-batch-size=" + batch,
                        minilm + "max-ongoing-requests=64", minilm + "max-queued-requests=1024"));
            }
            if (fp32) {
                arguments.addAll(fp32Arguments(out));
            }
            if (profile) {
                arguments.add("-XX:+EnableDynamicAgentLoading");
            }
            if (jfr) {
                arguments.add("-XX:StartFlightRecording=filename=" + out.toAbsolutePath().resolve("serval.jfr")
                        + ",settings=profile,dumponexit=true");
            }
            arguments.addAll(servalOptions);
            arguments.addFirst(ServalProcess.CACHE_OFF);
            servalConfig.put("arguments", arguments);
            servalConfig.put("jar", jar.toString());
            return arguments;
        }

        /** POSTs the workload's first body to Serval and returns its answer, for the bare server to replay. */
        private BareServer.Canned capture(ServalProcess server, Workload workload) throws IOException, InterruptedException {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(server.uri(workload.path()))
                    .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(workload.body(0).getBytes())).build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException("Serval answered " + response.statusCode() + " to the " + workload.name()
                        + " request: " + response.body());
            }
            Map<String, String> headers = new TreeMap<>();
            response.headers().map().forEach((name, values) -> {
                if (!Set.of("content-length", "transfer-encoding", "connection", "keep-alive").contains(name.toLowerCase())) {
                    headers.put(name, String.join(",", values));
                }
            });
            servalConfig.put("response:" + workload.name(), Map.of("status", response.statusCode(), "headers", headers,
                    "bodyBytes", response.body().getBytes(StandardCharsets.UTF_8).length));
            return new BareServer.Canned(response.statusCode(), headers, response.body());
        }

        /** The bare server's JVM and port. */
        private record BareJvm(ChildProcess jvm, int port) {
        }

        private BareJvm startBare(Map<String, BareServer.Canned> routes, int eventLoops) throws Exception {
            Path file = out.resolve("bare-routes.json");
            JSON.writeValue(file.toFile(), routes);
            int port = ServalProcess.freeLoopbackPort();
            ChildProcess jvm = child(ChildProcess.startJvm(BareServer.class, List.of(Integer.toString(port),
                    file.toString(), Integer.toString(eventLoops))));
            jvm.awaitLine(BareServer.READY, Duration.ofMinutes(1));
            System.out.printf("Bare Vert.x server with %d event loop(s) ready on port %d (pid %d)%n", eventLoops, port,
                    jvm.pid());
            return new BareJvm(jvm, port);
        }

        /**
         * Closed loops on Serval and the bare server (with Vert.x's default event loops and with Serval's)
         * alternately, then open loops at fractions of Serval's saturation rate, the bare server (default event
         * loops) at the same absolute rates.
         */
        private void transportWorkload(LoadGenerator generator, Target serval, Target bare, Target bareServalLoops,
                Workload workload) throws InterruptedException, IOException {
            System.out.println("Workload " + workload.name() + " (" + workload.path() + ")");
            preWarm(generator, bare, workload, settings.preWarmNoop());
            preWarm(generator, bareServalLoops, workload, settings.preWarmNoop());
            preWarm(generator, serval, workload, settings.preWarmNoop());
            List<Integer> connections = settings.noopConnections();
            for (int c : connections) {
                record(generator.closedLoop(BARE, bare.port(), bare.pid(), workload, c, settings.warmUp(),
                        settings.measure(), settings.drain()));
                record(generator.closedLoop(BARE_SERVAL_LOOPS, bareServalLoops.port(), bareServalLoops.pid(),
                        workload, c, settings.warmUp(), settings.measure(), settings.drain()));
                record(generator.closedLoop(SERVAL, serval.port(), serval.pid(), workload, c, settings.warmUp(),
                        settings.measure(), settings.drain()));
            }
            profiledRun(generator, workload.name() + "-closed" + connections.getLast(), () -> generator.closedLoop(
                    SERVAL, serval.port(), serval.pid(), workload, connections.getLast(), settings.warmUp(),
                    settings.measure(), settings.drain()));
            double saturation = saturation(SERVAL, workload.name());
            for (double fraction : settings.openFractions()) {
                double rate = Math.max(1, fraction * saturation);
                record(generator.openLoop(BARE, bare.port(), bare.pid(), workload, rate,
                        settings.openMaxConnectionsNoop(), settings.warmUp(), settings.measure(), settings.drain()));
                record(generator.openLoop(SERVAL, serval.port(), serval.pid(), workload, rate,
                        settings.openMaxConnectionsNoop(), settings.warmUp(), settings.measure(), settings.drain()));
            }
            profiledRun(generator, workload.name() + "-open50pct", () -> generator.openLoop(SERVAL, serval.port(),
                    serval.pid(), workload, Math.max(1, 0.5 * saturation), settings.openMaxConnectionsNoop(),
                    settings.warmUp(), settings.measure(), settings.drain()));
        }

        /**
         * The DJL loop at Serval's split and batch size, closed loops on Serval (and the bare server at the most
         * connections), the DJL loop again, then open loops on Serval at fractions of its saturation rate.
         */
        private void computeWorkload(LoadGenerator generator, Target serval, Target bare, Workload workload,
                String textSet, int batch, List<Integer> connections, List<Double> fractions) throws Exception {
            computeWorkload(generator, serval, bare, workload, textSet, batch, connections, fractions,
                    settings.preWarm(), false);
        }

        /**
         * {@link #computeWorkload}, pre-warming Serval for {@code preWarm}; with {@code batchOneLimits}, the raw
         * batch-1 limits ({@link #batchOnePlan}) are measured just before and just after the closed loops, where the
         * DJL loop is, and recorded as {@link #RAW_AROUND_DEFAULT}.
         */
        private void computeWorkload(LoadGenerator generator, Target serval, Target bare, Workload workload,
                String textSet, int batch, List<Integer> connections, List<Double> fractions, Duration preWarm,
                boolean batchOneLimits) throws Exception {
            System.out.println("Workload " + workload.name() + " (" + workload.path() + ", "
                    + workload.bodies().size() + " texts)");
            String deployment = workload.name().equals(MINILM_FP32_SHORT) ? FP32_DEPLOYMENT : MINILM_DEPLOYMENT;
            preWarm(generator, serval, workload, preWarm);
            RawLimits limitsBefore = batchOneLimits ? raw.sweep(batchOnePlan()) : null;
            RawLimits.Rate rawBefore = djlRate(limitsBefore, textSet, batch);
            for (int c : connections) {
                Map<String, Double> before = ServalMetrics.scrape(serval.metrics(), deployment);
                RunResult run = generator.closedLoop(SERVAL, serval.port(), serval.pid(), workload, c, settings.warmUp(),
                        settings.measure(), settings.drain());
                record(run.withServerMetrics(ServalMetrics.between(before,
                        ServalMetrics.scrape(serval.metrics(), deployment))));
            }
            profiledRun(generator, workload.name() + "-closed" + connections.getLast(), () -> generator.closedLoop(
                    SERVAL, serval.port(), serval.pid(), workload, connections.getLast(), settings.warmUp(),
                    settings.measure(), settings.drain()));
            RawLimits limitsAfter = batchOneLimits ? raw.sweep(batchOnePlan()) : null;
            RawLimits.Rate rawAfter = djlRate(limitsAfter, textSet, batch);
            if (batchOneLimits) {
                limits.put(RAW_AROUND_DEFAULT, limitsBefore.bestOf(limitsAfter));
            }
            // The CPU per text of the faster of the two: the raw loop at its best, against which Serval's is judged.
            RawLimits.Rate faster = rawBefore.textsPerSecond() >= rawAfter.textsPerSecond() ? rawBefore : rawAfter;
            rawInterleaved.put(workload.name(), Map.of("batch", batch, "split", SERVAL_SPLIT.label(), "textSet", textSet,
                    "before", rawBefore.textsPerSecond(), "after", rawAfter.textsPerSecond(),
                    "limit", faster.textsPerSecond(), "cpuMicrosPerText", faster.cpuMicrosPerText()));
            System.out.printf("  raw loop  %-14s batch %-6d %9.1f texts/s before, %.1f after%n", workload.name(),
                    batch, rawBefore.textsPerSecond(), rawAfter.textsPerSecond());
            if (bare != null) {
                record(generator.closedLoop(BARE, bare.port(), bare.pid(), workload, connections.getLast(),
                        settings.warmUp(), settings.measure(), settings.drain()));
            }
            double saturation = saturation(SERVAL, workload.name());
            for (double fraction : fractions) {
                Map<String, Double> before = ServalMetrics.scrape(serval.metrics(), deployment);
                RunResult run = generator.openLoop(SERVAL, serval.port(), serval.pid(), workload,
                        Math.max(1, fraction * saturation), settings.openMaxConnectionsTexts(), settings.warmUp(),
                        settings.measure(), settings.drain());
                record(run.withServerMetrics(ServalMetrics.between(before,
                        ServalMetrics.scrape(serval.metrics(), deployment))));
            }
            profiledRun(generator, workload.name() + "-open70pct", () -> generator.openLoop(SERVAL, serval.port(),
                    serval.pid(), workload, Math.max(1, 0.7 * saturation), settings.openMaxConnectionsTexts(),
                    settings.warmUp(), settings.measure(), settings.drain()));
        }

        /** Serval as shipped (batch-invariant: every text alone) on the short texts, against raw batch size 1. */
        private void defaultConfiguration() throws Exception {
            System.out.println("Serval's default configuration (batch-invariant) on " + MINILM_SHORT);
            Workload workload = Workload.texts(MINILM_SHORT + "-default", MINILM_DEPLOYMENT,
                    ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
            List<String> arguments = new ArrayList<>(List.of("-Dserval.deployments." + MINILM_DEPLOYMENT
                    + ".max-queued-requests=1024"));
            arguments.addAll(servalOptions);
            servalConfig.put("defaultConfigurationArguments", arguments);
            if (profile) {
                arguments.add("-XX:+EnableDynamicAgentLoading");
            }
            arguments.addFirst(ServalProcess.CACHE_OFF); // as servalArguments does: the same for another build's jar
            try (LoadGenerator generator = new LoadGenerator();
                    ServalProcess server = ServalProcess.start(arguments, jar, out.resolve("serval-default.log"))) {
                profiler = profile ? Profiler.of(server.pid(), out) : null;
                // Its JVM starts for this workload alone: three times the usual pre-warm, or it is measured while the
                // JIT still compiles its request path (issue 16: 0.71 of the DJL loop after 20 s, 0.93-0.96 after 60 s).
                // Its batch-1 limits are measured again next to its closed loops: the sweep's figures are from the
                // start of the run, and the machine drifts (issue 16, stop 31: the DJL loop at batch 1 made 1,176
                // texts/s in the sweep and 1,012 and 965 around this workload twenty minutes later; stop 32: 1,192
                // measured before the pre-warm, 1,075 after it).
                computeWorkload(generator, new Target(SERVAL, server.port(), server.pid()), null, workload, "short", 1,
                        List.of(1, settings.textConnections().getLast()), List.of(0.5, 0.7),
                        settings.preWarm().multipliedBy(3), true);
            }
        }

        /**
         * Every raw runtime at batch 1 on the short texts, at N x 1 and 1 x N, and its single-text latency at 1 x N:
         * the limits of Serval's default configuration, measured next to it.
         */
        private RawSweep.Plan batchOnePlan() {
            return RawSweep.Plan.batchOne(cores(), List.of(new RawLimits.Split(1, cores())), settings.rawWarmUp(),
                    settings.rawMeasure(), settings.rawSingleCalls());
        }

        /**
         * With --profile, runs {@code run} once more with Serval profiled, as {@code profile-<name>}, and records
         * nothing from it: a profiler costs the server a share of its CPU, so a profiled run is never one the report's
         * figures or goals come from (they did until issue 16's last runs: noop and the default configuration were
         * measured under the profiler).
         */
        private void profiledRun(LoadGenerator generator, String name, ProfiledRun run) throws InterruptedException,
                IOException {
            if (profiler == null) {
                return;
            }
            generator.profileNextRun(profiler, "profile-" + name);
            RunResult profiled = run.run();
            System.out.printf("  profiled  %-14s %-12s %9.1f req/s (not recorded)%n", profiled.workload(),
                    profiled.shape(), profiled.throughput());
        }

        /** One more run of the same shape, for {@link #profiledRun}. */
        private interface ProfiledRun {
            RunResult run() throws InterruptedException, IOException;
        }

        /** {@link LoadBenchmark#preWarm} with this run's drain. */
        private void preWarm(LoadGenerator generator, Target target, Workload workload, Duration duration)
                throws InterruptedException, IOException {
            LoadBenchmark.preWarm(generator, target, workload, duration, settings.drain());
        }

        private void record(RunResult run) {
            runs.add(run);
            System.out.printf("  %-10s %-14s %-12s %9.1f req/s  p50 %7.3f  p90 %7.3f  p99 %7.3f  p99.9 %7.3f ms"
                            + "  errors %s  cpu gen/server/other %.2f/%.2f/%.2f%s%n", run.target(), run.workload(),
                    run.shape(), run.throughput(), run.p50(), run.p90(), run.p99(), run.p999(),
                    run.errors().isEmpty() ? "0" : run.errors(), run.cpu().generator(), run.cpu().server(),
                    run.cpu().other(), run.serverMetrics().isEmpty() ? ""
                            : String.format("  take %.1f batch %.1f", run.serverMetrics().get("inputsPerInference"),
                                    run.serverMetrics().get("meanBatchSize")));
        }

        /** The highest closed-loop throughput of {@code target} on {@code workload}. */
        private double saturation(String target, String workload) {
            return Goals.saturation(runs, target, workload);
        }
    }

    /**
     * Serval's arguments for the fp32 workload: a model repository under {@code out} with the fp32 MiniLM as
     * {@link #FP32_DEPLOYMENT} version 1 (Serval adds its bundled models there at start), and that deployment, batched
     * as shipped ({@code max_batch_size} and batch invariance at their defaults), with room for 64 connections and its
     * result cache off (the texts cycle).
     */
    static List<String> fp32Arguments(Path out) throws IOException {
        Path repository = out.resolve("repository").toAbsolutePath();
        Path version = repository.resolve(FP32_DEPLOYMENT).resolve("1");
        Files.createDirectories(version);
        ClassLoader loader = LoadBenchmark.class.getClassLoader();
        if (!Files.isRegularFile(version.resolve("model.onnx"))) {
            ModelFiles.extract(loader, RawEmbeddingLoop.FP32_MODEL, version, "model.onnx");
        }
        if (!Files.isRegularFile(version.resolve("tokenizer.json"))) {
            ModelFiles.extract(loader, RawEmbeddingLoop.FP32_TOKENIZER, version, "tokenizer.json");
        }
        Files.writeString(version.resolve("model.yaml"),
                "kind: text-embedding\nfile: model.onnx\ntokenizer: tokenizer.json\nmax_length: 256\n");
        String deployment = "-Dserval.deployments." + FP32_DEPLOYMENT + ".";
        return List.of("-Dserval.repository.path=" + repository, deployment + "model=" + FP32_DEPLOYMENT,
                deployment + "max-ongoing-requests=64", deployment + "max-queued-requests=1024", deployment + "cache=off");
    }

    /**
     * Unrecorded closed loops, so that the first measured run does not pay for JIT compilation: 16 connections for
     * {@code duration}, then 1 connection for half of it, because a lone request takes paths that a loaded server
     * never does (an idle replica lends it its cores, and measures whether that pays while compiler threads still
     * compete for them).
     */
    static void preWarm(LoadGenerator generator, Target target, Workload workload, Duration duration,
            Duration drain) throws InterruptedException, IOException {
        for (int connections : new int[] {16, 1}) {
            RunResult warm = generator.closedLoop(target.name(), target.port(), target.pid(), workload, connections,
                    Duration.ofMillis(100), connections == 1 ? duration.dividedBy(2) : duration, drain);
            System.out.printf("  pre-warm %-10s %d connection(s) %8.0f req/s, %d errors%n", target.name(),
                    connections, warm.throughput(), warm.errorCount());
        }
    }

    /** A server under load: its name in the report, its port and process id (for CPU readings). */
    record Target(String name, int port, long pid) {

        /** Serval's Prometheus endpoint. */
        URI metrics() {
            return URI.create("http://127.0.0.1:" + port + "/q/metrics");
        }
    }
}
