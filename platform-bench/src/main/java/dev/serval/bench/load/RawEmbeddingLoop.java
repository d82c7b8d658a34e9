package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.predictor.Embedding;
import dev.serval.predictor.ModelFiles;
import dev.serval.predictor.Predictor;
import dev.serval.predictor.TextEmbeddingModel;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * The compute limit: the default model (quantised all-MiniLM-L6-v2, 256-token limit, 1 intra-op thread per
 * predictor) called in a raw loop in one JVM, with no HTTP, no queue and no hand-off: {@code threads} threads, each
 * with its own predictor, run batches of {@code batch} consecutive texts back to back. Batch size 1 loads the model
 * batch-invariant (each text alone, as Serval serves the quantised model by default); larger batches load it with
 * batch invariance off, so that {@link Predictor#predictBatch} really batches (grouped by token length, as
 * Serval's predictors do).
 *
 * <p>{@link #main} runs it in a child JVM for the load benchmark: arguments {@code threads warmUpMillis
 * measureMillis short=1,8,32 [mixed=8,32]} (a text set of {@link ChatTexts} and its batch sizes), answer one line
 * {@code RESULT {json}} with texts/s per text set and batch size, and one thread's single-text latency percentiles
 * on the short texts (batch size 1).
 */
public final class RawEmbeddingLoop {

    static final String RESULT = "RESULT ";
    private static final int MAX_LENGTH = 256;

    private RawEmbeddingLoop() {
    }

    /** Loads the default model from the class path, with one intra-op thread per predictor. */
    public static TextEmbeddingModel load(boolean batchInvariance) throws IOException {
        Path dir = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
        ClassLoader loader = RawEmbeddingLoop.class.getClassLoader();
        return TextEmbeddingModel.load(ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", dir),
                ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", dir), MAX_LENGTH, 1, batchInvariance);
    }

    /**
     * Texts/s of {@code threads} threads, each with its own predictor of {@code model}, running batches of
     * {@code batch} back to back over {@code texts} (thread t starts at text 997·t and cycles) for {@code warmUp}
     * and then {@code measure}; only texts finished inside the measurement count.
     */
    public static double textsPerSecond(TextEmbeddingModel model, List<String> texts, int threads, int batch,
            Duration warmUp, Duration measure) throws InterruptedException {
        AtomicLong done = new AtomicLong();
        long measureFrom = System.nanoTime() + warmUp.toNanos();
        long end = measureFrom + measure.toNanos();
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int offset = t * 997;
            workers.add(Thread.ofPlatform().name("raw-loop-" + t).start(() -> {
                try (Predictor<String, Embedding> predictor = model.newPredictor()) {
                    int next = offset;
                    List<String> group = new ArrayList<>(batch);
                    while (System.nanoTime() < end) {
                        group.clear();
                        for (int k = 0; k < batch; k++) {
                            group.add(texts.get(next++ % texts.size()));
                        }
                        int embedded = batch == 1 ? (predictor.predict(group.getFirst()) == null ? 0 : 1)
                                : predictor.predictBatch(group).size();
                        long now = System.nanoTime();
                        if (now >= measureFrom && now < end) {
                            done.addAndGet(embedded);
                        }
                    }
                } catch (Exception e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("raw loop failed", failures.getFirst());
        }
        return done.get() / (measure.toNanos() / 1e9);
    }

    /** One thread embedding one text at a time: latency of each call after {@code warmUp} calls, in nanoseconds. */
    static Histogram singleTextLatency(TextEmbeddingModel model, List<String> texts, int warmUp, int calls)
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

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        Duration warmUp = Duration.ofMillis(Long.parseLong(args[1]));
        Duration measure = Duration.ofMillis(Long.parseLong(args[2]));
        Map<String, int[]> sets = new LinkedHashMap<>();
        for (int i = 3; i < args.length; i++) {
            if (!args[i].isBlank()) {
                String[] set = args[i].split("=", 2);
                sets.put(set[0], Arrays.stream(set[1].split(",")).mapToInt(Integer::parseInt).toArray());
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("threads", threads);
        result.put("intraOpThreads", 1);
        result.put("warmUpSeconds", warmUp.toMillis() / 1e3);
        result.put("measureSeconds", measure.toMillis() / 1e3);
        Map<String, Map<String, Double>> rates = new LinkedHashMap<>();
        sets.keySet().forEach(set -> rates.put(set, new LinkedHashMap<>()));
        try (TextEmbeddingModel alone = load(true)) {
            Histogram single = singleTextLatency(alone, texts("short"), 200, 500);
            result.put("singleTextMillis", Map.of("p50", single.getValueAtPercentile(50) / 1e6,
                    "p99", single.getValueAtPercentile(99) / 1e6, "mean", single.getMean() / 1e6));
            for (Map.Entry<String, int[]> set : sets.entrySet()) {
                if (Arrays.stream(set.getValue()).anyMatch(b -> b == 1)) {
                    rates.get(set.getKey()).put("1", textsPerSecond(alone, texts(set.getKey()), threads, 1, warmUp, measure));
                }
            }
        }
        if (sets.values().stream().flatMapToInt(Arrays::stream).anyMatch(b -> b > 1)) {
            try (TextEmbeddingModel batched = load(false)) {
                for (Map.Entry<String, int[]> set : sets.entrySet()) {
                    for (int batch : set.getValue()) {
                        if (batch > 1) {
                            rates.get(set.getKey()).put(Integer.toString(batch),
                                    textsPerSecond(batched, texts(set.getKey()), threads, batch, warmUp, measure));
                        }
                    }
                }
            }
        }
        result.putAll(rates);
        System.out.println(RESULT + new ObjectMapper().writeValueAsString(result));
    }

    private static List<String> texts(String set) {
        return switch (set) {
            case "short" -> ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
            case "mixed" -> ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED);
            default -> throw new IllegalArgumentException("text set must be short or mixed, was " + set);
        };
    }
}
