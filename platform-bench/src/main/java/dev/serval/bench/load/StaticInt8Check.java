package dev.serval.bench.load;

import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A static-int8 MiniLM folder (written by {@code scripts/make_static_int8_minilm.py}) loaded the way Serval loads a
 * repository model, against the default model (dynamic int8, from the class path), in one process:
 * <ol>
 *   <li>the batching decision Serval's loader takes for each ({@link Model#batching()}: row-coupling operators, the
 *       alone-against-padded probe, the batch-size probe), with its evidence;</li>
 *   <li>batch invariance measured over real texts: each of {@code --texts} texts (chat lines, 1 % long) alone against
 *       the same text inside {@link Predictor#predictBatch} batches of 32 consecutive texts (grouped by token length
 *       and padded, as Serval's predictors batch), the largest element difference; for the default model loaded with
 *       batch invariance off, the same figure shows what its dynamic quantisation does to a batched text;</li>
 *   <li>the raw rate: {@link RawEmbeddingLoop#measure} (2 workers × 1 intra-op thread, the benchmark's short chat
 *       texts), the default model at batch 1 (as Serval serves it) and the static model at batch 1 and
 *       {@code --batches}, alternating for {@code --rounds} rounds, with the process CPU per text.</li>
 * </ol>
 * Run from the repository root after building platform-bench (the script writes the folder; see its header):
 * <pre>{@code
 * java --enable-native-access=ALL-UNNAMED -Dai.djl.offline=true -DOPT_OUT_TRACKING=true \
 *     -cp platform-bench/target/benchmarks.jar dev.serval.bench.load.StaticInt8Check \
 *     --folder ~/.cache/serval/repository/all-minilm-l6-v2-int8/1 [--texts 512] [--batches 8,16,32] [--rounds 2] \
 *     [--measure 6s]
 * }</pre>
 */
public final class StaticInt8Check {

    private static final int MAX_LENGTH = 256;
    private static final int INVARIANCE_BATCH = 32;

    private StaticInt8Check() {
    }

    public static void main(String[] args) throws Exception {
        List<String> arguments = List.of(args);
        Path folder = Path.of(Options.value(arguments, "--folder",
                System.getProperty("user.home") + "/.cache/serval/repository/all-minilm-l6-v2-int8/1"));
        int count = Integer.parseInt(Options.value(arguments, "--texts", "512"));
        List<Integer> batches = Options.ints(arguments, "--batches", List.of(8, 16, 32));
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", "2"));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(6));
        if (!Files.isRegularFile(folder.resolve("model.onnx"))) {
            throw new IllegalArgumentException(folder + " holds no model.onnx: run scripts/make_static_int8_minilm.py");
        }
        LoadOptions options = LoadOptions.defaults().withMaxLength(MAX_LENGTH);
        try (Model<String, Embedding> staticModel = TextModels.embedding(folder.resolve("model.onnx"),
                folder.resolve("tokenizer.json"), ModelKind.TEXT_EMBEDDING.defaultOutput(), OnnxOptions.none(),
                options);
                Model<String, Embedding> dynamic = RawEmbeddingLoop.load(true);
                Model<String, Embedding> dynamicBatched = RawEmbeddingLoop.load(false)) {
            report("static int8 (" + folder + ")", staticModel.batching());
            report("dynamic int8 (default)", dynamic.batching());
            List<String> texts = ChatTexts.withLongTexts(count, ChatTexts.SEED);
            System.out.printf(Locale.ROOT, "alone vs in batches of %d, largest element difference over %d texts: "
                    + "static %.3e, dynamic with invariance off %.3e%n", INVARIANCE_BATCH, texts.size(),
                    batchDifference(staticModel, texts), batchDifference(dynamicBatched, texts));

            List<String> workload = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
            System.out.println("| round | model | batch | texts/s | process CPU µs/text |");
            System.out.println("|---:|---|---:|---:|---:|");
            Duration warmUp = Duration.ofSeconds(2);
            for (int round = 1; round <= rounds; round++) {
                row(round, "dynamic", 1, RawEmbeddingLoop.measure(dynamic, workload, 2, 1, warmUp, measure));
                row(round, "static", 1, RawEmbeddingLoop.measure(staticModel, workload, 2, 1, warmUp, measure));
                for (int batch : batches) {
                    row(round, "static", batch,
                            RawEmbeddingLoop.measure(staticModel, workload, 2, batch, warmUp, measure));
                }
            }
        }
    }

    private static void report(String name, BatchingDecision decision) {
        Object preferred = decision.preferredBatch() == BatchingDecision.NO_PREFERENCE ? "none (max_batch_size)"
                : decision.preferredBatch();
        System.out.printf(Locale.ROOT, "%s: batched=%s batch-invariant=%s preferred batch=%s%n  %s%n", name,
                decision.batched(), decision.batchInvariant(), preferred, decision.reason());
    }

    /** The largest element difference between each text alone and in a batch of consecutive texts. */
    private static double batchDifference(Model<String, Embedding> model, List<String> texts) throws Exception {
        double worst = 0;
        try (Predictor<String, Embedding> predictor = model.newPredictor()) {
            List<Embedding> alone = new ArrayList<>();
            for (String text : texts) {
                alone.add(predictor.predict(text));
            }
            for (int from = 0; from < texts.size(); from += INVARIANCE_BATCH) {
                List<Embedding> batched = predictor.predictBatch(
                        texts.subList(from, Math.min(texts.size(), from + INVARIANCE_BATCH)));
                for (int i = 0; i < batched.size(); i++) {
                    float[] a = alone.get(from + i).vector();
                    float[] b = batched.get(i).vector();
                    for (int d = 0; d < a.length; d++) {
                        worst = Math.max(worst, Math.abs(a[d] - b[d]));
                    }
                }
            }
        }
        return worst;
    }

    private static void row(int round, String model, int batch, RawEmbeddingLoop.Throughput measured) {
        System.out.printf(Locale.ROOT, "| %d | %s | %d | %.0f | %.0f |%n", round, model, batch,
                measured.textsPerSecond(), measured.cpuMicrosPerText());
    }
}
