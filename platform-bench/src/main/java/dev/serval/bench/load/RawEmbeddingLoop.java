package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.model.Embedding;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.NativeRuntime;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.onnx.OnnxRuntimeLibrary;
import dev.serval.model.text.TextModels;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.DoubleAdder;
import org.HdrHistogram.Histogram;

/**
 * The compute limit as Java and DJL reach it: the default model (quantised all-MiniLM-L6-v2, 256-token limit)
 * called in a raw loop in one JVM, with no HTTP, no queue and no hand-off: {@code workers} threads, each with its own
 * predictor of {@code intraOp} ONNX Runtime threads, run batches of {@code batch} consecutive texts back to back.
 * Batch size 1 loads the model batch-invariant (each text alone, as Serval serves the quantised model by default);
 * larger batches load it with batch invariance off, so that {@link Predictor#predictBatch} really batches (grouped by
 * token length, as Serval's predictors do). The text set {@link #FP32_SHORT} runs the short texts on the fp32
 * all-MiniLM-L6-v2 instead, whose rows are independent, so that it batches at every size with invariance on.
 * {@code raw_onnxruntime.py} ({@link PythonRawLoop}) is the same loop in
 * Python with the same protocol.
 *
 * <p>{@link #main} serves measurements to the load benchmark from a child JVM, so that they can be interleaved
 * with Serval's runs without paying for a JVM start and a model load each time.
 */
public final class RawEmbeddingLoop {

    static final String READY = "READY";
    static final String RESULT = "RESULT ";
    static final String MODEL = "all-minilm-l6-v2-q.onnx";
    static final String TOKENIZER = "all-minilm-l6-v2-q-tokenizer.json";
    /** The fp32 all-MiniLM-L6-v2 (rows independent: it batches without changing answers) and its tokenizer. */
    static final String FP32_MODEL = "all-minilm-l6-v2.onnx";
    static final String FP32_TOKENIZER = "all-minilm-l6-v2-tokenizer.json";
    /** The text set of the fp32 model: the short texts, embedded by {@link #FP32_MODEL}. */
    static final String FP32_SHORT = "fp32-short";
    private static final int MAX_LENGTH = 256;

    private RawEmbeddingLoop() {
    }

    /** Loads the default model from the class path, with one intra-op thread per predictor. */
    public static Model<String, Embedding> load(boolean batchInvariance) throws IOException {
        return load(batchInvariance, 1);
    }

    /** Loads the default model from the class path, with {@code intraOp} intra-op threads per predictor. */
    static Model<String, Embedding> load(boolean batchInvariance, int intraOp) throws IOException {
        return TextModels.embedding(modelFile(MODEL), modelFile(TOKENIZER), ModelKind.TEXT_EMBEDDING.defaultOutput(),
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(MAX_LENGTH)
                        .withBatchInvariance(batchInvariance).withIntraOpThreads(intraOp));
    }

    /**
     * Loads the fp32 model from the class path, with {@code intraOp} intra-op threads per predictor; its rows are
     * independent, so it batches with batch invariance on, as Serval serves it.
     */
    static Model<String, Embedding> loadFp32(int intraOp) throws IOException {
        return TextModels.embedding(modelFile(FP32_MODEL), modelFile(FP32_TOKENIZER),
                ModelKind.TEXT_EMBEDDING.defaultOutput(), OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(MAX_LENGTH).withIntraOpThreads(intraOp));
    }

    /** {@link #MODEL} or {@link #TOKENIZER}, extracted from the class path into a directory under java.io.tmpdir. */
    static Path modelFile(String name) {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
        return ModelFiles.extract(RawEmbeddingLoop.class.getClassLoader(), name, dir);
    }

    /**
     * What one throughput measurement found: texts/s, and the process's CPU time per text over the measurement
     * (every thread of the process: the workers, ONNX Runtime's, the JIT's and the collector's, as Serval's process
     * CPU counts them), in microseconds.
     */
    public record Throughput(double textsPerSecond, double cpuMicrosPerText) {
    }

    /** {@link #measure}'s texts/s. */
    public static double textsPerSecond(Model<String, Embedding> model, List<String> texts, int threads, int batch,
            Duration warmUp, Duration measure) throws InterruptedException {
        return measure(model, texts, threads, batch, warmUp, measure).textsPerSecond();
    }

    /**
     * Texts/s of {@code threads} threads, each with its own predictor of {@code model}, running batches of
     * {@code batch} back to back over {@code texts} (thread t starts at text 997·t and cycles) for {@code warmUp}
     * and then {@code measure}; only inferences that end inside the measurement count, each thread's rate taken
     * between its first and last ending there ({@link WindowCount}), the threads' rates summed. The calling thread
     * reads the process's CPU time when the measurement starts and when it ends (it only waits meanwhile), so that
     * the CPU per text is the measurement's CPU over the texts it counted. Any text model's inputs will do: the rerank
     * benchmark's raw loop ({@link RerankRawLoop}) runs (query, document) pairs through it.
     */
    public static <I> Throughput measure(Model<I, ?> model, List<I> texts, int threads, int batch,
            Duration warmUp, Duration measure) throws InterruptedException {
        DoubleAdder rate = new DoubleAdder();
        long measureFrom = System.nanoTime() + warmUp.toNanos();
        long end = measureFrom + measure.toNanos();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int offset = t * 997;
            workers.add(Thread.ofPlatform().name("raw-loop-" + t).start(() -> {
                try (Predictor<I, ?> predictor = model.newPredictor()) {
                    WindowCount count = new WindowCount(measureFrom, end);
                    int next = offset;
                    List<I> group = new ArrayList<>(batch);
                    while (System.nanoTime() < end) {
                        group.clear();
                        for (int k = 0; k < batch; k++) {
                            group.add(texts.get(next++ % texts.size()));
                        }
                        int embedded = batch == 1 ? (predictor.predict(group.getFirst()) == null ? 0 : 1)
                                : predictor.predictBatch(group).size();
                        count.ended(System.nanoTime(), embedded);
                    }
                    rate.add(count.textsPerSecond());
                } catch (Exception e) {
                    failures.add(e);
                }
            }));
        }
        // A benchmark's clock, not a wait for another thread's state: the CPU is read at the window's two edges.
        Thread.sleep(Math.max(0, (measureFrom - System.nanoTime()) / 1_000_000));
        long cpuFrom = MachineUsage.generatorCpu();
        Thread.sleep(Math.max(0, (end - System.nanoTime()) / 1_000_000));
        long cpu = MachineUsage.generatorCpu() - cpuFrom;
        for (Thread worker : workers) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("raw loop failed", failures.getFirst());
        }
        double counted = rate.sum() * measure.toNanos() / 1e9;
        return new Throughput(rate.sum(), counted > 0 ? cpu / 1e3 / counted : Double.NaN);
    }

    /** One thread embedding one text at a time: latency of each call after {@code warmUp} calls, in nanoseconds. */
    static Histogram singleTextLatency(Model<String, Embedding> model, List<String> texts, int warmUp, int calls)
            throws Exception {
        Histogram histogram = new Histogram(1, Duration.ofMinutes(1).toNanos(), 3);
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            for (int i = 0; i < warmUp + calls; i++) {
                long start = System.nanoTime();
                predictor.predict(texts.get((i * 7 + 1) % texts.size()));
                if (i >= warmUp) {
                    histogram.recordValue(System.nanoTime() - start);
                }
            }
        }
        return histogram;
    }

    /**
     * The child-JVM side: prints {@code READY {"onnxruntime": VERSION, "onnxruntimeJava": VERSION, "djl": VERSION}}
     * (the runtime its process maps, and the ONNX Runtime Java whose classes drive it), then answers commands read from
     * standard input, one per line, each with one {@code RESULT {json}} line, until {@code quit} or the end of its input (its
     * parent is gone). Models are loaded on first use, one per intra-op thread count and batch mode, and kept:
     * <ul>
     *   <li>{@code measure SET BATCH WARM_UP_MS MEASURE_MS WORKERS INTRA_OP}: texts/s of the loop over text set
     *       {@code short}, {@code mixed} or {@code fp32-short} (the short texts on the fp32 model, {@link #FP32_SHORT});
 *       </li>
     *   <li>{@code single SET WARM_UP_CALLS CALLS INTRA_OP}: one thread's single-text latency percentiles in ms (batch
     *       size 1).</li>
     * </ul>
     */
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, Model<String, Embedding>> models = new HashMap<>();
        try {
            model(models, true, 1); // first: DJL's engine must create the ONNX Runtime environment
            // the runtime the process really maps (the packaged one by default, docs/onnxruntime.md)
            String runtime = OnnxRuntimeLibrary.loaded().map(NativeRuntime::version)
                    .orElseGet(() -> ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion());
            System.out.println(READY + " " + json.writeValueAsString(Map.of("onnxruntime", runtime,
                    "onnxruntimeJava", OnnxRuntimeLibrary.javaApiVersion(),
                    "djl", ai.djl.engine.Engine.getDjlVersion())));
            System.out.flush();
            String line;
            while ((line = commands.readLine()) != null && !line.equals("quit")) {
                String[] command = line.trim().split(" ");
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("set", command[1]);
                switch (command[0]) {
                    case "measure" -> {
                        int batch = Integer.parseInt(command[2]);
                        int workers = Integer.parseInt(command[5]);
                        int intraOp = Integer.parseInt(command[6]);
                        result.put("batch", batch);
                        result.put("workers", workers);
                        result.put("intraOp", intraOp);
                        Model<String, Embedding> model = command[1].equals(FP32_SHORT) ? fp32(models, intraOp)
                                : model(models, batch == 1, intraOp);
                        Throughput measured = measure(model, texts(command[1]),
                                workers, batch, Duration.ofMillis(Long.parseLong(command[3])),
                                Duration.ofMillis(Long.parseLong(command[4])));
                        result.put("textsPerSecond", measured.textsPerSecond());
                        result.put("cpuMicrosPerText", measured.cpuMicrosPerText());
                    }
                    case "single" -> {
                        int intraOp = Integer.parseInt(command[4]);
                        Histogram single = singleTextLatency(model(models, true, intraOp), texts(command[1]),
                                Integer.parseInt(command[2]), Integer.parseInt(command[3]));
                        result.put("workers", 1);
                        result.put("intraOp", intraOp);
                        result.put("p50", single.getValueAtPercentile(50) / 1e6);
                        result.put("p99", single.getValueAtPercentile(99) / 1e6);
                        result.put("mean", single.getMean() / 1e6);
                    }
                    default -> throw new IllegalArgumentException("unknown command: " + line);
                }
                System.out.println(RESULT + json.writeValueAsString(result));
                System.out.flush();
            }
        } finally {
            for (Model<String, Embedding> model : models.values()) {
                model.close();
            }
        }
    }

    private static Model<String, Embedding> model(Map<String, Model<String, Embedding>> models,
            boolean batchInvariance, int intraOp) throws IOException {
        String key = batchInvariance + "/" + intraOp;
        Model<String, Embedding> model = models.get(key);
        if (model == null) {
            model = load(batchInvariance, intraOp);
            models.put(key, model);
        }
        return model;
    }

    private static Model<String, Embedding> fp32(Map<String, Model<String, Embedding>> models, int intraOp)
            throws IOException {
        String key = "fp32/" + intraOp;
        Model<String, Embedding> model = models.get(key);
        if (model == null) {
            model = loadFp32(intraOp);
            models.put(key, model);
        }
        return model;
    }

    private static List<String> texts(String set) {
        return switch (set) {
            case "short", FP32_SHORT -> ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
            case "mixed" -> ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED);
            default -> throw new IllegalArgumentException("text set must be short, mixed or " + FP32_SHORT + ", was "
                    + set);
        };
    }
}
