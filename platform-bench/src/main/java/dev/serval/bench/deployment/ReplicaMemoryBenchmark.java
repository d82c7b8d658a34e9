package dev.serval.bench.deployment;

import dev.serval.bench.model.EmbeddingBenchmark;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Embedding;
import dev.serval.routing.RoutableReplica;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.PredictorSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;

/**
 * Resident memory of a process serving the default model (quantised all-MiniLM-L6-v2) with 1 replica and with 8,
 * and what each extra replica adds. Not a JMH benchmark: memory is a property of a whole process, so each
 * configuration runs in a fresh JVM and reports its {@code VmRSS}.
 *
 * <p>Configurations, each in its own child JVM (this class re-launched with {@code --child}, the same
 * {@code java} binary and class path, the JVM flags the benchmarks use, and any {@code -X...} options this
 * process was started with):
 * <ul>
 *   <li>1 deployment × 1 replica;</li>
 *   <li>1 deployment × 8 replicas: the replicas share one loaded model (weights are loaded once per version),
 *       so each extra replica should cost only its predictor thread, its predictor and its queues. Goal from
 *       the issue: at most 10 MB per extra replica;</li>
 *   <li>the baseline, 8 deployments × 1 replica: the same engine, but each deployment loads its own copy of the
 *       model, as a server that loads the weights per replica would.</li>
 * </ul>
 * Every replica has 1 predictor thread with 1 intra-op thread ({@code predictorThreads 1}). In each child, a
 * {@link ServingEngine} deploys the model from the class path, waits until {@code status().running()} reaches
 * the replica count, sends 25 rounds of concurrent one-text requests (two per replica per round) through
 * {@link Deployment#submit}, then one request to each replica directly (through its slot in the routing
 * snapshot), so that every replica has served real requests and not only its warm-up probe. Then it runs
 * {@link System#gc()} three times, reads {@code VmRSS} from {@code /proc/self/status} (Linux only), and closes
 * the engine.
 *
 * <p>"MB per extra replica" is (RSS − RSS of the 1-replica configuration) / (replicas − 1). RSS moves by a few
 * MB from run to run (heap sizing, ONNX Runtime's arena, class loading), so use {@code --runs 3} (median per
 * configuration) when the difference matters.
 *
 * <p>Run from the repository root (under 10 s per run of the three configurations on two cores):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -cp platform-bench/target/benchmarks.jar dev.serval.bench.deployment.ReplicaMemoryBenchmark
 * java -cp platform-bench/target/benchmarks.jar dev.serval.bench.deployment.ReplicaMemoryBenchmark --runs 3
 * }</pre>
 * Heap options given to this command (e.g. {@code -Xmx512m} before {@code -cp}) are passed on to the children.
 */
public final class ReplicaMemoryBenchmark {

    private static final List<String> CHILD_FLAGS = List.of(
            "-Dai.djl.offline=true",
            "-DOPT_OUT_TRACKING=true",
            "-Dai.djl.default_engine=OnnxRuntime",
            "--enable-native-access=ALL-UNNAMED");
    private static final Duration READY_TIMEOUT = Duration.ofMinutes(5);
    private static final int ROUNDS = 25;
    private static final String RESULT = "RESULT ";
    private static final String[] TEXTS = {
        "Hi, can you help me reset my password?",
        "My package arrived broken, I want a refund.",
        "Why was my card declined again today?",
        "The app crashes after the update on my phone.",
        "Thanks, that fixed it!",
        "How do I change the shipping address on my order?",
        "Still no answer from support after two hours.",
        "Is there a discount code for the new plan?",
    };

    private ReplicaMemoryBenchmark() {
    }

    /** One child run: {@code deployments} deployments of {@code replicas} replicas each. */
    private record Configuration(String label, int deployments, int replicas) {
        int totalReplicas() {
            return deployments * replicas;
        }
    }

    private record Measurement(long rssKb, long hwmKb, long heapUsedKb, int threads) {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--child")) {
            child(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
            return;
        }
        int runs = 1;
        if (args.length == 2 && args[0].equals("--runs")) {
            runs = Integer.parseInt(args[1]);
        } else if (args.length != 0) {
            System.err.println("usage: ReplicaMemoryBenchmark [--runs N]");
            System.exit(2);
        }
        List<Configuration> configurations = List.of(
                new Configuration("1 deployment x 1 replica", 1, 1),
                new Configuration("1 deployment x 8 replicas (shared model)", 1, 8),
                new Configuration("baseline: 8 deployments x 1 replica", 8, 1));
        Map<Configuration, List<Measurement>> results = new LinkedHashMap<>();
        for (int run = 1; run <= runs; run++) {
            for (Configuration configuration : configurations) {
                System.out.printf("run %d/%d: %s ...%n", run, runs, configuration.label());
                results.computeIfAbsent(configuration, c -> new ArrayList<>()).add(runChild(configuration));
            }
        }
        printTable(results, runs);
    }

    private static Measurement runChild(Configuration configuration) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("-X") && !CHILD_FLAGS.contains(argument)) {
                command.add(argument);
            }
        }
        command.addAll(CHILD_FLAGS);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ReplicaMemoryBenchmark.class.getName());
        command.add("--child");
        command.add(Integer.toString(configuration.deployments()));
        command.add(Integer.toString(configuration.replicas()));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Measurement measurement = null;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith(RESULT)) {
                    measurement = parse(line.substring(RESULT.length()));
                } else {
                    System.out.println("  | " + line);
                }
            }
        }
        int exit = process.waitFor();
        if (exit != 0 || measurement == null) {
            throw new IllegalStateException("child for '" + configuration.label() + "' exited with " + exit
                    + (measurement == null ? " without a result" : "") + "; command: " + String.join(" ", command));
        }
        return measurement;
    }

    private static Measurement parse(String fields) {
        Map<String, Long> values = new LinkedHashMap<>();
        for (String field : fields.trim().split(" ")) {
            String[] pair = field.split("=", 2);
            values.put(pair[0], Long.parseLong(pair[1]));
        }
        return new Measurement(values.get("rssKb"), values.get("hwmKb"), values.get("heapUsedKb"),
                values.get("threads").intValue());
    }

    private static void printTable(Map<Configuration, List<Measurement>> results, int runs) {
        System.out.println();
        System.out.printf("Resident memory after serving (VmRSS; %s of %d run%s per configuration)%n",
                runs == 1 ? "one" : "median", runs, runs == 1 ? "" : "s");
        System.out.printf("%-42s %8s %11s %8s %9s %12s %8s %22s%n", "configuration", "replicas", "model loads",
                "RSS MB", "peak MB", "heap used MB", "threads", "MB per extra replica");
        double baseRss = Double.NaN;
        for (Map.Entry<Configuration, List<Measurement>> entry : results.entrySet()) {
            Configuration configuration = entry.getKey();
            double rss = median(entry.getValue(), Measurement::rssKb) / 1024.0;
            double hwm = median(entry.getValue(), Measurement::hwmKb) / 1024.0;
            double heap = median(entry.getValue(), Measurement::heapUsedKb) / 1024.0;
            double threads = median(entry.getValue(), m -> m.threads());
            if (configuration.totalReplicas() == 1) {
                baseRss = rss;
            }
            String perExtra = configuration.totalReplicas() == 1 || Double.isNaN(baseRss) ? "-"
                    : String.format("%.1f", (rss - baseRss) / (configuration.totalReplicas() - 1));
            System.out.printf("%-42s %8d %11d %8.1f %9.1f %12.1f %8.0f %22s%n", configuration.label(),
                    configuration.totalReplicas(), configuration.deployments(), rss, hwm, heap, threads, perExtra);
        }
        if (runs > 1) {
            System.out.println();
            System.out.println("RSS MB of every run:");
            for (Map.Entry<Configuration, List<Measurement>> entry : results.entrySet()) {
                System.out.printf("%-42s %s%n", entry.getKey().label(), entry.getValue().stream()
                        .map(m -> String.format("%.1f", m.rssKb() / 1024.0)).toList());
            }
        }
    }

    private static double median(List<Measurement> measurements, ToLongFunction<Measurement> field) {
        long[] values = measurements.stream().mapToLong(field).sorted().toArray();
        int n = values.length;
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
    }

    // The child process.

    private static void child(int deployments, int replicas) throws Exception {
        ServingEngine engine = new ServingEngine();
        try {
            List<Deployment<String, Embedding>> all = new ArrayList<>();
            for (int d = 0; d < deployments; d++) {
                DeploymentSpec spec = DeploymentSpec.defaults("bench-minilm-" + d, "bundled:all-minilm-l6-v2-q")
                        .withNumReplicas(replicas)
                        .withPredictors(new PredictorSpec(1, 1, true));
                all.add(engine.deploy(spec, deployed -> EmbeddingBenchmark.loadModel(deployed.predictors().intraOpThreads())));
            }
            long started = System.nanoTime();
            for (Deployment<String, Embedding> deployment : all) {
                awaitRunning(deployment, replicas, started);
            }
            System.out.printf("%d deployment(s) x %d replica(s) RUNNING after %d ms%n", deployments, replicas,
                    (System.nanoTime() - started) / 1_000_000);
            int served = serve(all, replicas);
            System.out.printf("served %d requests%n", served);
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(200); // let the collector and the allocator return memory before reading RSS
            }
            Map<String, Long> status = procStatus();
            long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            System.out.printf("%srssKb=%d hwmKb=%d heapUsedKb=%d threads=%d%n", RESULT, status.get("VmRSS"),
                    status.get("VmHWM"), heapUsed / 1024, status.get("Threads"));
        } finally {
            engine.close();
        }
    }

    private static void awaitRunning(Deployment<String, Embedding> deployment, int replicas, long since)
            throws InterruptedException {
        long deadline = since + READY_TIMEOUT.toNanos();
        while (deployment.status().running() < replicas) {
            if (deployment.state() == DeploymentState.FAILED) {
                throw new IllegalStateException("deployment " + deployment.name() + " failed: "
                        + deployment.failure().orElse("no reason given") + "; status " + deployment.status());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("deployment " + deployment.name() + " has "
                        + deployment.status().running() + " of " + replicas + " replicas RUNNING after "
                        + READY_TIMEOUT + "; status " + deployment.status());
            }
            Thread.sleep(20); // waiting for launcher threads to start replicas: nothing to join on
        }
    }

    /**
     * {@link #ROUNDS} rounds of two concurrent requests per replica through the serving path, then one request on
     * each replica directly, so that none has served only its warm-up probe.
     */
    private static int serve(List<Deployment<String, Embedding>> all, int replicas) {
        int served = 0;
        int next = 0;
        for (int round = 0; round < ROUNDS; round++) {
            List<CompletableFuture<List<Embedding>>> pending = new ArrayList<>();
            for (Deployment<String, Embedding> deployment : all) {
                for (int i = 0; i < 2 * replicas; i++) {
                    pending.add(deployment.submit(List.of(TEXTS[next++ % TEXTS.length])));
                }
            }
            for (CompletableFuture<List<Embedding>> request : pending) {
                request.join();
                served++;
            }
        }
        for (Deployment<String, Embedding> deployment : all) {
            List<RoutableReplica<String, Embedding>> routable = deployment.replicas();
            if (routable.size() != replicas) {
                throw new IllegalStateException("deployment " + deployment.name() + " routes to " + routable.size()
                        + " replicas, expected " + replicas);
            }
            for (RoutableReplica<String, Embedding> replica : routable) {
                if (!replica.tryAcquire()) {
                    throw new IllegalStateException("replica " + replica.id() + " of " + deployment.name()
                            + " refused a request while idle");
                }
                try {
                    replica.run(List.of(TEXTS[next++ % TEXTS.length])).join();
                    served++;
                } finally {
                    replica.release();
                }
            }
        }
        return served;
    }

    /** The {@code kB} and count fields of {@code /proc/self/status}, by name. */
    private static Map<String, Long> procStatus() throws IOException {
        Map<String, Long> fields = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String[] value = line.substring(colon + 1).trim().split("\\s+");
            if (value.length >= 1 && !value[0].isEmpty() && value[0].chars().allMatch(Character::isDigit)
                    && (value.length == 1 || value[1].equals("kB"))) {
                fields.put(line.substring(0, colon), Long.parseLong(value[0]));
            }
        }
        return fields;
    }
}
