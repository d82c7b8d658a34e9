package dev.serval.bench.model;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.BatchObserver;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.onnx.OnnxSessions;
import dev.serval.model.text.TextModels;
import dev.serval.spec.DeploymentSpec;
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
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Whether loading and closing a model leaks native memory, or only fragments the C allocator: the same tiny
 * text-embedding model (platform-core's {@code tiny-fp32-encoder}, 8 KB, with MiniLM's 0.7 MB {@code tokenizer.json},
 * what the combined soak's multiplexed deployment cycles through its LRU) loaded, run once and closed thousands of
 * times in one process, reading {@code VmRSS} and the heap after a GC every {@code --every} cycles. Not a JMH
 * benchmark: resident memory is a property of a whole process.
 *
 * <p>What one cycle does ({@code --mode}):
 * <ul>
 *   <li>{@code text}: {@link TextModels#embedding} (tokenizer, ONNX Runtime session, the load's probe inferences), a
 *       predictor, one inference, then the predictor and the model closed: what a multiplexed model's load and
 *       eviction do to native memory;</li>
 *   <li>{@code replica}: the multiplexer's path: a deployment of the model on a {@link ServingEngine} scaled from 0
 *       replicas to 1, one request, and back to 0, as {@code MultiplexedDeployment} does on a load and an
 *       eviction (the replica launcher, the deployment's shared models, the predictor thread's close), counting the
 *       models and predictors opened and closed;</li>
 *   <li>{@code tokenizer}: only the Hugging Face tokenizer built and closed;</li>
 *   <li>{@code session}: only the ONNX Runtime session ({@link OnnxSessions#open}) opened and closed.</li>
 * </ul>
 * {@code --leak} skips the closes and keeps what it opened reachable (the positive control: what a missing close
 * looks like). {@code --threads fresh} runs each cycle on a new platform thread, as a replica's launcher and predictor
 * threads are new for each load; {@code one} runs every cycle on the main thread; {@code rotate:N} runs cycle i on
 * the (i mod N)th of N long-lived threads, so that loads come from threads attached to different allocator arenas.
 * {@code --background N} keeps one more copy of the model resident and serving on N threads meanwhile, as a
 * server's other models do.
 *
 * <p>With {@code --variants}, this class re-launches itself once per C allocator setting, the children at the same
 * time so that they share the machine's state, and prints each one's RSS per cycle (the least-squares slope over the
 * second half of its samples, ± its standard error: the first half holds the JIT, class loading and allocator arenas
 * growing), its RSS at the start and the end, and the end's ratio to the default's. Variants (the children get no
 * other {@code MALLOC_} variable of this process's environment):
 * <ul>
 *   <li>{@code default}: glibc's defaults (up to 8 arenas per core);</li>
 *   <li>{@code arena2}: {@code MALLOC_ARENA_MAX=2};</li>
 *   <li>{@code arena2-trim}: {@code MALLOC_ARENA_MAX=2} and {@code MALLOC_TRIM_THRESHOLD_=131072} (glibc's initial
 *       threshold, fixed so that it no longer grows with the largest freed chunk).</li>
 * </ul>
 *
 * <p>Run from the repository root (a few minutes on two cores; results in docs/benchmarks/load-unload-churn/):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java --enable-native-access=ALL-UNNAMED -cp platform-bench/target/benchmarks.jar \
 *     dev.serval.bench.model.LoadUnloadChurn --variants --mode text --threads fresh --cycles 2000 --every 100
 * }</pre>
 */
public final class LoadUnloadChurn {

    private static final String SAMPLE = "SAMPLE ";
    private static final Path DEFAULT_MODEL =
            Path.of("platform-core", "src", "test", "resources", "models", "tiny-fp32-encoder", "model.onnx");
    private static final Map<String, Map<String, String>> VARIANTS = variants();
    /**
     * What {@code --leak} leaves open, kept reachable as a forgotten registration would keep it (an unreachable
     * tokenizer would be freed by its finalizer at the next GC, hiding the leak).
     */
    private static final List<Object> LEAKED = Collections.synchronizedList(new ArrayList<>());

    private LoadUnloadChurn() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = options(args);
        if (options.containsKey("--variants")) {
            parent(args, options);
        } else {
            child(options);
        }
    }

    private static Map<String, Map<String, String>> variants() {
        Map<String, Map<String, String>> variants = new LinkedHashMap<>();
        variants.put("default", Map.of());
        variants.put("arena2", Map.of("MALLOC_ARENA_MAX", "2"));
        variants.put("arena2-trim", Map.of("MALLOC_ARENA_MAX", "2", "MALLOC_TRIM_THRESHOLD_", "131072"));
        return variants;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new LinkedHashMap<>(Map.of("--mode", "text", "--threads", "fresh",
                "--cycles", "2000", "--every", "100", "--model", DEFAULT_MODEL.toString(), "--background", "0"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--variants", "--leak" -> options.put(args[i], "true");
                case "--mode", "--threads", "--cycles", "--every", "--only", "--model", "--background" -> {
                    if (i + 1 == args.length) {
                        throw new IllegalArgumentException(args[i] + " needs a value");
                    }
                    options.put(args[i], args[++i]);
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + "; known: --mode "
                        + "text|tokenizer|session, --threads fresh|one, --cycles N, --every K, --leak, --variants, "
                        + "--only variant,variant, --model FILE, --background N");
            }
        }
        return options;
    }

    /** Launches one child per variant, all at once, and prints their slopes side by side. */
    private static void parent(String[] args, Map<String, String> options) throws Exception {
        List<String> childArgs = new ArrayList<>();
        for (String arg : args) {
            if (!arg.equals("--variants")) {
                childArgs.add(arg);
            }
        }
        List<String> only = options.containsKey("--only") ? List.of(options.get("--only").split(","))
                : List.copyOf(VARIANTS.keySet());
        int onlyAt = childArgs.indexOf("--only");
        if (onlyAt >= 0) {
            childArgs.remove(onlyAt + 1);
            childArgs.remove(onlyAt);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Map<String, Process> children = new LinkedHashMap<>();
        for (String name : only) {
            List<String> command = new ArrayList<>(List.of(java));
            command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), LoadUnloadChurn.class.getName()));
            command.addAll(childArgs);
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().keySet().removeIf(key -> key.startsWith("MALLOC_"));
            builder.environment().putAll(VARIANTS.get(name));
            children.put(name, builder.start());
        }
        Map<String, List<long[]>> samples = new LinkedHashMap<>();
        List<Thread> readers = new ArrayList<>();
        for (Map.Entry<String, Process> child : children.entrySet()) {
            List<long[]> mine = new ArrayList<>();
            samples.put(child.getKey(), mine);
            Thread reader = Thread.ofPlatform().start(() -> read(child.getKey(), child.getValue(), mine));
            readers.add(reader);
        }
        for (Thread reader : readers) {
            reader.join();
        }
        for (Map.Entry<String, Process> child : children.entrySet()) {
            if (child.getValue().waitFor() != 0) {
                throw new IllegalStateException("variant " + child.getKey() + " exited with "
                        + child.getValue().exitValue());
            }
        }
        System.out.printf("%nmode %s, threads %s, %s cycles%s; RSS in MB at cycle:%n", options.get("--mode"),
                options.get("--threads"), options.get("--cycles"), options.containsKey("--leak") ? ", closes skipped"
                        : "");
        List<long[]> first = samples.values().iterator().next();
        System.out.printf("%-8s", "cycle");
        samples.keySet().forEach(name -> System.out.printf(" %12s", name));
        System.out.println();
        for (int i = 0; i < first.size(); i++) {
            System.out.printf("%-8d", first.get(i)[0]);
            for (List<long[]> series : samples.values()) {
                System.out.printf(" %12.1f", i < series.size() ? series.get(i)[1] / 1024.0 : Double.NaN);
            }
            System.out.println();
        }
        double base = Double.NaN;
        System.out.printf("%nRSS per cycle over the second half (KB/cycle), heap after GC per cycle, RSS at the start "
                + "and the end, the end's ratio to the first variant's:%n");
        for (Map.Entry<String, List<long[]>> series : samples.entrySet()) {
            double[] rss = slope(series.getValue(), 1);
            double[] heap = slope(series.getValue(), 2);
            List<long[]> values = series.getValue();
            double last = values.getLast()[1] / 1024.0;
            if (Double.isNaN(base)) {
                base = last;
            }
            System.out.printf("%-12s RSS %+8.2f ± %.2f KB/cycle  heap %+8.3f KB/cycle  RSS %7.1f -> %7.1f MB (%.2f of "
                    + "the first)%n", series.getKey(), rss[0], rss[1], heap[0], values.getFirst()[1] / 1024.0, last,
                    last / base);
        }
    }

    private static void read(String name, Process process, List<long[]> samples) {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                if (line.startsWith(SAMPLE)) {
                    String[] fields = line.substring(SAMPLE.length()).trim().split("\\s+");
                    synchronized (samples) {
                        samples.add(new long[] {Long.parseLong(fields[0]), Long.parseLong(fields[1]),
                                Long.parseLong(fields[2])});
                    }
                    System.out.println(name + ": " + line);
                } else if (!line.contains("INFO") && !line.isBlank()) {
                    System.out.println(name + "| " + line);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Least-squares slope of column {@code column} (KB) against the cycle over the second half of the samples, and
     * its standard error.
     */
    static double[] slope(List<long[]> samples, int column) {
        List<long[]> half = samples.subList(samples.size() / 2, samples.size());
        double n = half.size();
        double sx = 0;
        double sy = 0;
        for (long[] sample : half) {
            sx += sample[0];
            sy += sample[column];
        }
        double mx = sx / n;
        double my = sy / n;
        double num = 0;
        double den = 0;
        for (long[] sample : half) {
            num += (sample[0] - mx) * (sample[column] - my);
            den += (sample[0] - mx) * (sample[0] - mx);
        }
        if (den == 0 || n < 3) {
            return new double[] {Double.NaN, Double.NaN};
        }
        double b = num / den;
        double residuals = 0;
        for (long[] sample : half) {
            double r = sample[column] - my - b * (sample[0] - mx);
            residuals += r * r;
        }
        return new double[] {b, Math.sqrt(residuals / (n - 2) / den)};
    }

    private static void child(Map<String, String> options) throws Exception {
        Logger.getLogger("").setLevel(Level.WARNING); // each load logs its batching decision at INFO
        Path directory = Files.createTempDirectory("serval-churn");
        Path modelFile = Files.copy(Path.of(options.get("--model")), directory.resolve("model.onnx"));
        Path tokenizer = ModelFiles.extract(LoadUnloadChurn.class.getClassLoader(), "all-minilm-l6-v2-q-tokenizer.json",
                directory, "tokenizer.json");
        String mode = options.get("--mode");
        boolean leak = options.containsKey("--leak");
        String threads = options.get("--threads");
        boolean fresh = threads.equals("fresh");
        List<ExecutorService> rotation = new ArrayList<>();
        if (threads.startsWith("rotate:")) {
            for (int t = Integer.parseInt(threads.substring("rotate:".length())); t > 0; t--) {
                rotation.add(Executors.newSingleThreadExecutor());
            }
        } else if (!fresh && !threads.equals("one")) {
            throw new IllegalArgumentException("--threads is fresh, one or rotate:N, was " + threads);
        }
        Cycle cycle = switch (mode) {
            case "text" -> () -> text(modelFile, tokenizer, leak);
            case "tokenizer" -> () -> {
                HuggingFaceTokenizer built = HuggingFaceTokenizer.builder().optTokenizerPath(tokenizer)
                        .optAddSpecialTokens(true).optTruncation(true).optMaxLength(256).optPadding(false).build();
                built.encode("churn");
                if (leak) {
                    LEAKED.add(built);
                } else {
                    built.close();
                }
            };
            case "session" -> () -> {
                var model = OnnxSessions.open(modelFile, 1, OnnxOptions.none(), false);
                if (leak) {
                    LEAKED.add(model);
                } else {
                    model.close();
                }
            };
            case "replica" -> new ReplicaCycle(modelFile, tokenizer);
            default -> throw new IllegalArgumentException("--mode is text, replica, tokenizer or session, was "
                    + mode);
        };
        int background = Integer.parseInt(options.get("--background"));
        if (background > 0) {
            serveInBackground(modelFile, tokenizer, background);
        }
        int cycles = Integer.parseInt(options.get("--cycles"));
        int every = Integer.parseInt(options.get("--every"));
        sample(0);
        for (int i = 1; i <= cycles; i++) {
            if (fresh) {
                AtomicReference<Exception> failure = new AtomicReference<>();
                Thread thread = Thread.ofPlatform().start(() -> {
                    try {
                        cycle.run();
                    } catch (Exception e) {
                        failure.set(e);
                    }
                });
                thread.join();
                if (failure.get() != null) {
                    throw failure.get();
                }
            } else if (!rotation.isEmpty()) {
                rotation.get(i % rotation.size()).submit(() -> {
                    cycle.run();
                    return null;
                }).get();
            } else {
                cycle.run();
            }
            if (i % every == 0 || i == 1 || i == 10) {
                sample(i);
                if (cycle instanceof ReplicaCycle replicas) {
                    System.out.println("COUNTS " + i + " " + replicas.counts());
                }
            }
        }
        rotation.forEach(ExecutorService::shutdown);
        if (cycle instanceof ReplicaCycle replicas) {
            replicas.close();
        }
    }

    /**
     * {@code threads} daemon threads, each with a predictor of one resident model, running inferences on texts of
     * varying length until the process exits: the models a server keeps serving (and their allocations, in the C
     * allocator's arenas) while others are loaded and evicted.
     */
    private static void serveInBackground(Path modelFile, Path tokenizer, int threads) throws IOException {
        Model<String, Embedding> resident = TextModels.embedding(modelFile, tokenizer, "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256));
        for (int t = 0; t < threads; t++) {
            Thread.ofPlatform().daemon(true).name("churn-serve-" + t).start(() -> {
                try (Predictor<String, Embedding> predictor = resident.newPredictor()) {
                    StringBuilder text = new StringBuilder();
                    for (long i = 0; ; i++) {
                        text.setLength(0);
                        for (long w = i % 97; w >= 0; w--) {
                            text.append("word").append(w).append(' ');
                        }
                        predictor.predict(text.toString());
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
    }

    private static void text(Path modelFile, Path tokenizer, boolean leak) throws Exception {
        Model<String, Embedding> model = TextModels.embedding(modelFile, tokenizer, "last_hidden_state",
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256));
        Predictor<String, Embedding> predictor = model.newPredictor();
        predictor.predict("a text the multiplexed model answers once before it is evicted");
        if (leak) {
            LEAKED.add(List.of(model, predictor));
        } else {
            predictor.close();
            model.close();
        }
    }

    private static void sample(int cycle) throws IOException {
        System.gc();
        long heap = (Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory()) / 1024;
        long rss = 0;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        System.out.println(SAMPLE + cycle + " " + rss + " " + heap);
    }

    @FunctionalInterface
    private interface Cycle {
        void run() throws Exception;
    }
    /**
     * The multiplexer's path for one model: a deployment of the model scaled from 0 replicas to 1 (its model loaded by
     * the replica launcher, through the deployment's shared models), one request, and back to 0 (the replica stops
     * and the last reference closes the model), as {@code MultiplexedDeployment} does on a load and an eviction.
     * Counts the models and predictors opened and closed: after each cycle every one is closed, or the cycle fails.
     */
    private static final class ReplicaCycle implements Cycle, AutoCloseable {

        private static final Duration STOPPED_WITHIN = Duration.ofSeconds(60);

        private final ServingEngine engine = new ServingEngine();
        private final Deployment<String, Embedding> deployment;
        private final AtomicInteger modelsOpened = new AtomicInteger();
        private final AtomicInteger modelsClosed = new AtomicInteger();
        private final AtomicInteger predictorsOpened = new AtomicInteger();
        private final AtomicInteger predictorsClosed = new AtomicInteger();

        ReplicaCycle(Path modelFile, Path tokenizer) {
            DeploymentSpec spec = DeploymentSpec.defaults("churn", "m-00").withNumReplicas(0)
                    .withPredictors(new PredictorSpec(1, 1, false));
            deployment = engine.deploy(spec, deployed -> new Counted(TextModels.embedding(modelFile, tokenizer,
                    "last_hidden_state", OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256))));
        }

        @Override
        public void run() throws Exception {
            deployment.update(deployment.spec().withNumReplicas(1)).get();
            deployment.serving().get();
            deployment.submit(List.of("a text the multiplexed model answers once before it is evicted")).get();
            deployment.update(deployment.spec().withNumReplicas(0)).get();
            long deadline = System.nanoTime() + STOPPED_WITHIN.toNanos();
            while (modelsClosed.get() < modelsOpened.get() || predictorsClosed.get() < predictorsOpened.get()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("not closed within " + STOPPED_WITHIN + " of scaling to 0: "
                            + counts());
                }
                Thread.sleep(1); // polling the counters for the closes (a benchmark program: nothing signals them)
            }
        }

        String counts() {
            return "models " + modelsOpened + "/" + modelsClosed + " predictors " + predictorsOpened + "/"
                    + predictorsClosed + " (opened/closed)";
        }

        @Override
        public void close() {
            engine.close();
        }

        /** A model that counts its own close and its predictors' opens and closes. */
        private final class Counted extends ForwardingModel<String, Embedding> {

            Counted(Model<String, Embedding> model) {
                super(model);
                modelsOpened.incrementAndGet();
            }

            @Override
            public Predictor<String, Embedding> newPredictor() {
                return newPredictor(BatchObserver.NONE);
            }

            @Override
            public Predictor<String, Embedding> newPredictor(BatchObserver observer) {
                Predictor<String, Embedding> predictor = model.newPredictor(observer);
                predictorsOpened.incrementAndGet();
                return new Predictor<>() {
                    @Override
                    public Embedding predict(String input) throws Exception {
                        return predictor.predict(input);
                    }

                    @Override
                    public Embedding predict(String input, BooleanSupplier abandoned) throws Exception {
                        return predictor.predict(input, abandoned);
                    }

                    @Override
                    public List<Embedding> predictBatch(List<String> inputs) throws Exception {
                        return predictor.predictBatch(inputs);
                    }

                    @Override
                    public void widen(boolean wide) {
                        predictor.widen(wide);
                    }

                    @Override
                    public void close() {
                        predictor.close();
                        predictorsClosed.incrementAndGet();
                    }
                };
            }

            @Override
            public void close() {
                model.close();
                modelsClosed.incrementAndGet();
            }
        }
    }
}
