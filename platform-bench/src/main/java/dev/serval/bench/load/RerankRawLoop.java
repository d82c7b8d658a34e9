package dev.serval.bench.load;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.NativeRuntime;
import dev.serval.model.Relevance;
import dev.serval.model.TextPair;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.onnx.OnnxRuntimeLibrary;
import dev.serval.model.text.TextModels;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rerank benchmark's limit: the cross-encoder Serval serves, loaded through the same {@link TextModels#rerank}
 * and called in a raw loop ({@link RawEmbeddingLoop#measure}) in a JVM of its own, with no HTTP, no queue and no
 * hand-off: {@code workers} threads, each with its own predictor of {@code intraOp} ONNX Runtime threads, score
 * batches of {@code batch} consecutive (query, document) pairs of {@link RerankWorkload}'s queries back to back, each
 * batch tokenised as pairs with the model's {@code tokenizer.json} and grouped by token length as Serval's predictors
 * group it ({@code predictBatch}).
 *
 * <p>{@link #main} serves measurements to {@link RerankBenchmark} from a child JVM, so that they can be taken just
 * before and after Serval's runs without a JVM start and a model load each time, and without sharing the load
 * generator's JVM. Arguments: the model's version folder ({@code model.onnx}, {@code tokenizer.json}) and its
 * {@code max_length}. Protocol, {@link RawEmbeddingLoop}'s: {@code READY {versions}}, then one {@code RESULT {json}}
 * line per command read from standard input until {@code quit} or the end of the input:
 * {@code measure BATCH WARM_UP_MS MEASURE_MS WORKERS INTRA_OP} gives {@code pairsPerSecond} and
 * {@code cpuMicrosPerPair}. Models are loaded on first use, one per intra-op thread count, and kept.
 */
public final class RerankRawLoop {

    static final String READY = RawEmbeddingLoop.READY;
    static final String RESULT = RawEmbeddingLoop.RESULT;
    /** Serval's default for {@code max_documents_per_request}; the raw loop never checks it. */
    private static final int MAX_DOCUMENTS = 1000;

    private RerankRawLoop() {
    }

    /** The cross-encoder of {@code version} ({@code model.onnx}, {@code tokenizer.json}), as Serval loads it. */
    static Model<TextPair, Relevance> load(Path version, int maxLength, int intraOp) throws IOException {
        return TextModels.rerank(version.resolve("model.onnx"), version.resolve("tokenizer.json"),
                ModelKind.TEXT_RERANK.defaultOutput(), OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(maxLength).withIntraOpThreads(intraOp), MAX_DOCUMENTS);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: RerankRawLoop MODEL_VERSION_DIR MAX_LENGTH");
        }
        Path version = Path.of(args[0]);
        int maxLength = Integer.parseInt(args[1]);
        List<TextPair> pairs = RerankWorkload.pairs(RerankWorkload.queries(RerankWorkload.QUERIES,
                RerankWorkload.SEED));
        ObjectMapper json = new ObjectMapper();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<Integer, Model<TextPair, Relevance>> models = new HashMap<>();
        try {
            models.put(1, load(version, maxLength, 1)); // first: DJL's engine creates the ONNX Runtime environment
            String runtime = OnnxRuntimeLibrary.loaded().map(NativeRuntime::version)
                    .orElseGet(() -> ai.onnxruntime.OrtEnvironment.getEnvironment().getVersion());
            System.out.println(READY + " " + json.writeValueAsString(Map.of("onnxruntime", runtime,
                    "onnxruntimeJava", OnnxRuntimeLibrary.javaApiVersion(), "djl", ai.djl.engine.Engine.getDjlVersion(),
                    "pairs", pairs.size())));
            System.out.flush();
            String line;
            while ((line = commands.readLine()) != null && !line.equals("quit")) {
                String[] command = line.trim().split(" ");
                if (!command[0].equals("measure") || command.length != 6) {
                    throw new IllegalArgumentException("unknown command: " + line);
                }
                int batch = Integer.parseInt(command[1]);
                int workers = Integer.parseInt(command[4]);
                int intraOp = Integer.parseInt(command[5]);
                Model<TextPair, Relevance> model = models.get(intraOp);
                if (model == null) {
                    model = load(version, maxLength, intraOp);
                    models.put(intraOp, model);
                }
                RawEmbeddingLoop.Throughput measured = RawEmbeddingLoop.measure(model, pairs, workers, batch,
                        Duration.ofMillis(Long.parseLong(command[2])), Duration.ofMillis(Long.parseLong(command[3])));
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("batch", batch);
                result.put("workers", workers);
                result.put("intraOp", intraOp);
                result.put("pairsPerSecond", measured.textsPerSecond());
                result.put("cpuMicrosPerPair", measured.cpuMicrosPerText());
                System.out.println(RESULT + json.writeValueAsString(result));
                System.out.flush();
            }
        } finally {
            for (Model<TextPair, Relevance> model : models.values()) {
                model.close();
            }
        }
    }
}
