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

/**
 * Serval under overload (issue 14): does it keep serving at its capacity, and refuse the rest quickly and usefully,
 * when offered far more than it can take by arrivals that do not slow down when it does?
 *
 * <p>The packaged Serval ({@link ServalProcess}) runs the default MiniLM deployment (batch-invariant: every text
 * alone, 2 predictor threads, 1 replica) with a 16-request queue ({@code max-queued-requests=16}) and its default 8
 * ongoing requests per replica, written explicitly ({@code max-ongoing-requests=8}) because the latency bound below
 * is computed from them. From this JVM, with {@link LoadGenerator} and one short chat-like text per OIP request:
 *
 * <ol>
 *   <li>JIT warm-up: an unrecorded closed loop of 16 connections, then an unrecorded open loop at twice the rate it
 *       reached, so that the refusal path is compiled too before anything is measured;</li>
 *   <li>capacity C: texts/s of 4 closed-loop clients; and the single-request latency (p50 of 1 client), which is
 *       "one inference" in the bound;</li>
 *   <li>open loops at 1, 2, 5, 10 and 20 &times; C, each {@code --duration} long after a short unrecorded warm-up,
 *       latency from each request's intended send time (no coordinated omission), with the figures of
 *       {@link OverloadGoals} per multiple: goodput / C, answers by status, refusals (non-200) that were not 429/503
 *       with Retry-After, requests with no HTTP answer, refusal p50/p99/max, admitted p50/p99 against the bound
 *       {@code (16 + 8) / C + single-request p50}, the client's connections (opened, peak, wait for a free one),
 *       Serval's CPU share, RSS and its own meters (queue wait, inference time);</li>
 *   <li>recovery: C again with 4 closed-loop clients after the last overload, as a ratio of the first.</li>
 * </ol>
 *
 * <p>The reference a refusal is held to, measured in the same run before the overloads: the issue asks that a refusal
 * cost about what a request that does no work costs. Serval also runs the {@code noop} model (a second deployment,
 * idle during the overloads, with room for 1024 queued requests so that it never refuses); after its own warm-up, an
 * open loop on it at the goal multiple's rate (10 &times; C requests/s) gives the p50 and p99 of a no-op request at
 * that rate, which the report puts next to the refusals' ({@link Reference}).
 *
 * <p>The client is a bounded keep-alive pool ({@code --connections}, 512 by default; see {@link LoadGenerator}): a
 * fixed population of clients, each with one request in flight, as many real clients are. It never opens connections
 * without limit, so it measures Serval rather than its own (and the kernel's) collapse. 512 is far more than a server
 * that answers as the goals ask needs (at 20 &times; C of about 700 texts/s, refusals of 1 ms and 24 admitted
 * requests keep under 40 connections busy); when Serval answers slower than that, requests wait in the client for a
 * connection, that wait counts in their latency, and the report shows it (connection wait p99, peak = the bound).
 *
 * <p>Output in {@code platform-bench/target/overload/} (or {@code --out DIR}): {@code report.json} (every figure and
 * setting), {@code summary.md} (the goals at 10 &times; C, then every multiple), {@code goodput.png} and
 * {@code latency.png}, and Serval's log. Run from the repository root (full: about 4 minutes on two cores;
 * {@code --quick}: about 80 s):
 * <pre>{@code
 * bin/loadbench --overload [--quick] [--duration 20s] [--multiples 1,2,5,10,20] [--connections 512]
 *                          [--out DIR] [--serval-opt -Dkey=value]...
 * }</pre>
 * which builds if needed and runs
 * {@code java -cp platform-bench/target/benchmarks.jar dev.serval.bench.load.OverloadBenchmark [options]}.
 */
public final class OverloadBenchmark {

    static final String DEPLOYMENT = LoadBenchmark.MINILM_DEPLOYMENT;
    static final int MAX_QUEUED = 16;
    /** Serval's default, written explicitly: the bound on admitted latency depends on it. */
    static final int MAX_ONGOING = 8;
    static final int REPLICAS = 1;
    static final int CAPACITY_CLIENTS = 4;
    static final String NOOP = LoadBenchmark.NOOP;

    /**
     * How long each phase is.
     *
     * @param preWarm      the closed loop of 16 connections that warms the JIT on the serving path
     * @param refusalWarm  the open loop at 2 x that warm-up's rate that warms the refusal path
     * @param capacity     C's measurement window (4 clients), after {@code warmUp}
     * @param single       the single-request latency's window (1 client), after {@code warmUp}
     * @param warmUp       the unrecorded start of every run
     * @param duration     each multiple's measurement window
     * @param drain        how long a run waits for answers after its last request
     * @param settle       idle time between multiples, for Serval to empty its queue and close what it holds
     * @param openAi       whether the requests go to the OpenAI embeddings endpoint ({@code --api openai}: the model is
     *                     named in the body, so a refusal is decided once it is read) instead of OIP's
     */
    record Settings(String mode, Duration preWarm, Duration refusalWarm, Duration capacity, Duration single,
            Duration warmUp, Duration duration, Duration drain, Duration settle, List<Double> multiples,
            int connections, boolean openAi) {

        static Settings quick() {
            return new Settings("quick", Duration.ofSeconds(5), Duration.ofSeconds(3), Duration.ofSeconds(4),
                    Duration.ofSeconds(2), Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(5),
                    Duration.ofSeconds(1), List.of(1.0, 2.0, 5.0, 10.0, 20.0), 512, false);
        }

        static Settings full() {
            return new Settings("full", Duration.ofSeconds(20), Duration.ofSeconds(5), Duration.ofSeconds(10),
                    Duration.ofSeconds(5), Duration.ofSeconds(3), Duration.ofSeconds(20), Duration.ofSeconds(10),
                    Duration.ofSeconds(2), List.of(1.0, 2.0, 5.0, 10.0, 20.0), 512, false);
        }

        Settings with(Duration duration, List<Double> multiples, int connections, boolean openAi) {
            return new Settings(mode, preWarm, refusalWarm, capacity, single, warmUp, duration, drain, settle,
                    multiples, connections, openAi);
        }
    }

    /**
     * One offered multiple of C.
     *
     * @param multiple    offered / C
     * @param run         the open-loop run (texts/s = requests/s: one text per request), Serval's meters included
     * @param servalRssMb Serval's resident memory after the run, MiB
     * @param verdicts    the goals at this multiple
     */
    record Step(double multiple, RunResult run, double servalRssMb, List<OverloadGoals.Verdict> verdicts) {
    }

    /**
     * What the capacity phase measured.
     *
     * @param capacity    C: texts/s of 4 closed-loop clients
     * @param singleP50   p50 of one closed-loop client, ms
     * @param boundMillis the admitted-latency bound derived from them
     * @param recovered   C measured again after the overload, texts/s
     * @param otherCpu    the share of the cores other processes used while C was measured
     */
    record Capacity(double capacity, double singleP50, double boundMillis, double recovered, double otherCpu) {
    }

    /**
     * The no-op reference: Serval's {@code noop} model, open loop at {@code multiple} x C.
     *
     * @param run its run (every request answered 200 when Serval is healthy)
     */
    record Reference(double multiple, RunResult run) {
    }

    private OverloadBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, "usage: bin/loadbench --overload [--quick] [--duration 20s] [--multiples 1,2,5,10,20] "
                        + "[--connections 512] [--api oip|openai] [--out DIR] [--serval-opt -Dkey=value]...",
                Set.of("--quick"),
                Set.of("--duration", "--multiples", "--connections", "--api", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Settings settings = arguments.contains("--quick") ? Settings.quick() : Settings.full();
        Duration duration = Options.duration(arguments, "--duration", settings.duration());
        List<Double> multiples = Options.doubles(arguments, "--multiples", settings.multiples());
        int connections = Integer.parseInt(Options.value(arguments, "--connections",
                Integer.toString(settings.connections())));
        String api = Options.value(arguments, "--api", "oip");
        if (!api.equals("oip") && !api.equals("openai")) {
            throw new IllegalArgumentException("--api is oip or openai, not " + api);
        }
        settings = settings.with(duration, multiples, connections, api.equals("openai"));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/overload"));
        Files.createDirectories(out);
        run(settings, out, Options.servalOptions(args));
    }

    private static void run(Settings settings, Path out, List<String> servalOptions) throws Exception {
        long startedNanos = System.nanoTime();
        Instant started = Instant.now();
        String loadBefore = MachineUsage.loadAverage();
        Map<String, Object> commit = Options.commit(); // before the run: what the jar was built from, not later edits
        System.out.printf("Serval overload benchmark, %s mode: %s x C for %s each, %d client connections; "
                        + "%d CPUs, load average %s, Java %s%n", settings.mode(), settings.multiples(),
                Options.human(settings.duration()), settings.connections(), Runtime.getRuntime().availableProcessors(),
                loadBefore, System.getProperty("java.version"));
        String prefix = "-Dserval.deployments." + DEPLOYMENT + ".";
        String noop = "-Dserval.deployments." + NOOP + ".";
        List<String> servalArguments = new ArrayList<>(List.of(prefix + "max-queued-requests=" + MAX_QUEUED,
                prefix + "max-ongoing-requests=" + MAX_ONGOING, prefix + "num-replicas=" + REPLICAS,
                noop + "model=noop", noop + "max-ongoing-requests=64", noop + "max-queued-requests=1024"));
        servalArguments.addAll(servalOptions);
        List<String> texts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
        Workload workload = settings.openAi() ? Workload.openAiTexts(LoadBenchmark.MINILM_SHORT, DEPLOYMENT, texts)
                : Workload.texts(LoadBenchmark.MINILM_SHORT, DEPLOYMENT, texts);
        List<Step> steps = new ArrayList<>();
        List<RunResult> phases = new ArrayList<>();
        Capacity capacity;
        Reference reference;
        Map<String, Object> generatorInfo = new LinkedHashMap<>();
        try (LoadGenerator generator = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(servalArguments, out.resolve("serval.log"))) {
            System.out.printf("Serval ready on port %d (pid %d; log %s)%n", serval.port(), serval.pid(), serval.log());
            generatorInfo.put("client", "Vert.x HTTP/1.1 client, 1 event loop, keep-alive pool of at most "
                    + settings.connections() + " connections, no pipelining");
            generatorInfo.put("transport", generator.nativeTransport() ? "epoll (native)" : "NIO");
            LoadBenchmark.Target target = new LoadBenchmark.Target(LoadBenchmark.SERVAL, serval.port(), serval.pid());

            RunResult warm = generator.closedLoop(target.name(), target.port(), target.pid(), workload, 16,
                    Duration.ofMillis(100), settings.preWarm(), settings.drain());
            print("warm-up, closed 16 (unrecorded)", warm);
            RunResult refusalWarm = generator.openLoop(target.name(), target.port(), target.pid(), workload,
                    Math.max(1, 2 * warm.throughput()), settings.connections(), Duration.ofMillis(100),
                    settings.refusalWarm(), settings.drain());
            print("warm-up, open 2x (unrecorded)", refusalWarm);
            pause(settings.settle());

            RunResult closed = generator.closedLoop(target.name(), target.port(), target.pid(), workload,
                    CAPACITY_CLIENTS, settings.warmUp(), settings.capacity(), settings.drain());
            print("capacity C, closed " + CAPACITY_CLIENTS, closed);
            RunResult single = generator.closedLoop(target.name(), target.port(), target.pid(), workload, 1,
                    settings.warmUp(), settings.single(), settings.drain());
            print("single request, closed 1", single);
            phases.add(closed);
            phases.add(single);
            double c = closed.throughput();
            double bound = OverloadGoals.admittedBoundMillis(MAX_QUEUED, MAX_ONGOING, REPLICAS, c, single.p50());
            System.out.printf("  C = %.1f texts/s; single-request p50 %.2f ms; admitted p99 bound (%d + %d x %d) / C "
                    + "+ p50 = %.1f ms%n", c, single.p50(), MAX_QUEUED, MAX_ONGOING, REPLICAS, bound);

            Workload noopWorkload = Workload.noop(NOOP);
            RunResult noopWarm = generator.closedLoop(target.name(), target.port(), target.pid(), noopWorkload, 16,
                    Duration.ofMillis(100), settings.refusalWarm(), settings.drain());
            print("noop warm-up, closed 16 (unrecorded)", noopWarm);
            pause(settings.settle());
            reference = new Reference(OverloadGoals.GOAL_MULTIPLE, generator.openLoop(target.name(), target.port(),
                    target.pid(), noopWorkload, OverloadGoals.GOAL_MULTIPLE * c, settings.connections(),
                    settings.warmUp(), settings.duration(), settings.drain()));
            print(String.format("noop reference, open %.0f x C", OverloadGoals.GOAL_MULTIPLE), reference.run());

            for (double multiple : settings.multiples()) {
                pause(settings.settle());
                Map<String, Double> before = ServalMetrics.scrape(target.metrics(), DEPLOYMENT);
                RunResult run = generator.openLoop(target.name(), target.port(), target.pid(), workload,
                        multiple * c, settings.connections(), settings.warmUp(), settings.duration(), settings.drain());
                run = run.withServerMetrics(ServalMetrics.between(before, ServalMetrics.scrape(target.metrics(),
                        DEPLOYMENT)));
                List<OverloadGoals.Verdict> verdicts = OverloadGoals.evaluate(OverloadGoals.Point.of(multiple, run), c,
                        bound);
                Step step = new Step(multiple, run, MachineUsage.residentBytes(serval.pid()) / (double) (1 << 20), verdicts);
                steps.add(step);
                printStep(step, c);
            }

            pause(settings.settle());
            RunResult after = generator.closedLoop(target.name(), target.port(), target.pid(), workload,
                    CAPACITY_CLIENTS, settings.warmUp(), settings.capacity(), settings.drain());
            print("recovery: C again, closed " + CAPACITY_CLIENTS, after);
            phases.add(after);
            capacity = new Capacity(c, single.p50(), bound, after.throughput(), closed.cpu().other());
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "serval-overload");
        report.put("mode", settings.mode());
        report.put("startedAt", started.toString());
        report.put("durationSeconds", Math.round((System.nanoTime() - startedNanos) / 1e9));
        report.put("commit", commit);
        report.put("machine", Options.machine(loadBefore));
        report.put("jvm", Options.jvm());
        report.put("generator", generatorInfo);
        report.put("settings", settings);
        report.put("serval", Map.of("arguments", servalArguments, "deployment", DEPLOYMENT, "maxQueuedRequests",
                MAX_QUEUED, "maxOngoingRequests", MAX_ONGOING, "replicas", REPLICAS));
        report.put("capacity", capacity);
        report.put("noopReference", reference);
        report.put("goalMultiple", OverloadGoals.GOAL_MULTIPLE);
        report.put("phases", phases);
        report.put("steps", steps);
        OverloadReport.write(out, report, settings, capacity, reference, steps);
        System.out.println("Report: " + out.resolve("summary.md") + ", " + out.resolve("report.json") + " ("
                + Math.round((System.nanoTime() - startedNanos) / 1e9) + " s)");
    }

    private static void pause(Duration duration) throws InterruptedException {
        Thread.sleep(duration); // idle on purpose: let Serval empty its queue before the next run
    }

    private static void print(String what, RunResult run) {
        System.out.printf("  %-34s %8.1f texts/s  p50 %7.2f  p99 %8.2f ms  errors %s  cpu gen/serval/other "
                        + "%.2f/%.2f/%.2f%n", what, run.throughput(), run.p50(), run.p99(),
                run.errors().isEmpty() ? "0" : run.errors(), run.cpu().generator(), run.cpu().server(),
                run.cpu().other());
    }

    private static void printStep(Step step, double capacity) {
        RunResult run = step.run();
        RunResult.Refusals refusals = run.refusals();
        System.out.printf("  %4.0fx C (%7.0f/s): goodput %.2f C; %d ok, %s; improper %d, unanswered %d; refusal p50 %.2f "
                        + "p99 %.2f max %.1f ms; admitted p50 %.1f p99 %.1f ms; connections peak %d opened %d wait p99 "
                        + "%.1f ms; cpu serval %.2f other %.2f; rss %.0f MB; goals %s%n", step.multiple(),
                run.offeredRate(), run.throughput() / capacity, run.successes(),
                run.errors().isEmpty() ? "no errors" : run.errors(), refusals.improper(), run.unanswered(),
                refusals.p50(), refusals.p99(), refusals.max(), run.p50(), run.p99(), run.client().peak(),
                run.client().opened(), run.client().waitP99(), run.cpu().server(), run.cpu().other(),
                step.servalRssMb(), OverloadGoals.allMet(step.verdicts()) ? "met" : "NOT met");
    }
}
