package dev.serval.bench.model;

import dev.serval.bench.BenchmarkBase;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelFiles;
import dev.serval.model.ModelKind;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.PredictorSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Texts embedded per second by a model whose batch rows are independent (the fp32 export of all-MiniLM-L6-v2, 256-token
 * limit) on short chat-like texts under a full queue: Serval's pool, batching as its load-time probe chose, against a
 * raw loop at each batch size, whose best is the limit the pool is measured against (goal: at least 0.9 of it).
 * Every score is in texts/s.
 *
 * <ul>
 *   <li>{@link #pool}: the serving path. A {@link Deployment} of one replica with 2 predictor threads of 1 intra-op
 *       thread each (the {@link DeploymentSpec#defaults} shape), started by a {@link ServingEngine}; its model's load
 *       probed the batch sizes ({@link BatchingDecision#preferredBatch()}, printed at setup) and the pool takes at most
 *       {@code min(max_batch_size, preferred)} texts per inference. Two callers ({@code @Threads(2)}) each submit a
 *       burst of {@value #BURST} one-text requests and wait for all of them, so that the queue rarely empties, as
 *       under many HTTP clients. {@code maxBatchSize} 32 is the default deployment; 1 is the same pool without
 *       batching, for scale.</li>
 *   <li>{@link #raw}, the limit: two threads ({@code @Threads(2)}), each with its own predictor of 1 intra-op thread,
 *       embedding {@value #BURST} texts back to back in calls of {@code batch} texts (Serval's predictor sorts and
 *       groups each call by token length, as the pool's does); no queue, no requests, no hand-off.</li>
 * </ul>
 *
 * <p>The texts are {@link EmbeddingBenchmark#chatTexts}: 256 texts of 5 to 30 words, the same in every run.
 *
 * <p>Run from the repository root (about 3 minutes on two cores with these settings):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar BatchSizeBenchmark -wi 2 -i 3 -w 3s -r 3s
 * }</pre>
 * The pool's ratio is {@code pool(maxBatchSize=32)} over the best {@code raw} score of the same run.
 */
public class BatchSizeBenchmark extends BenchmarkBase {

    /** Texts per invocation: each caller's burst in {@link #pool}, each thread's texts in {@link #raw}. */
    static final int BURST = 32;
    private static final int TEXT_COUNT = 256;
    private static final String[] TEXTS = EmbeddingBenchmark.chatTexts(TEXT_COUNT, 20240607L);

    /** Each caller submits {@value #BURST} one-text requests, then waits for every answer. */
    @Benchmark
    @Threads(2)
    @OperationsPerInvocation(BURST)
    public int pool(Served served, Cursor cursor) {
        List<CompletableFuture<List<Embedding>>> answers = new ArrayList<>(BURST);
        for (int i = 0; i < BURST; i++) {
            answers.add(served.deployment.submit(List.of(cursor.next())));
        }
        int dimensions = 0;
        for (CompletableFuture<List<Embedding>> answer : answers) {
            dimensions += answer.join().getFirst().vector().length;
        }
        return dimensions;
    }

    /** The limit: {@value #BURST} texts on this thread's own predictor, in calls of {@code batch} texts. */
    @Benchmark
    @Threads(2)
    @OperationsPerInvocation(BURST)
    public int raw(RawPredictor raw, Cursor cursor) throws Exception {
        int dimensions = 0;
        for (int done = 0; done < BURST; done += raw.batch) {
            List<String> texts = new ArrayList<>(raw.batch);
            for (int i = 0; i < raw.batch; i++) {
                texts.add(cursor.next());
            }
            for (Embedding embedding : raw.predictor.predictBatch(texts)) {
                dimensions += embedding.vector().length;
            }
        }
        return dimensions;
    }

    /** The deployment under test, shared by the callers; ready before the first iteration. */
    @State(Scope.Benchmark)
    public static class Served {

        /** The deployment's {@code max_batch_size}: 32 (the default) lets the probe's choice limit batches. */
        @Param({"32", "1"})
        public int maxBatchSize;

        ServingEngine engine;
        Deployment<String, Embedding> deployment;

        @Setup(Level.Trial)
        public void start() throws Exception {
            DeploymentSpec spec = DeploymentSpec.defaults("bench-minilm-fp32", "bundled:all-minilm-l6-v2")
                    .withNumReplicas(1)
                    .withPredictors(new PredictorSpec(2, 1, true))
                    .withAdmission(new AdmissionSpec(BURST * 4, BURST * 8, 1, AdmissionSpec.DEFAULTS.requestTimeout()))
                    .withHealth(HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofMinutes(10)))
                    .withBatching(BatchingSpec.DEFAULTS.withMaxBatchSize(maxBatchSize));
            engine = new ServingEngine();
            deployment = engine.deploy(spec, deployed -> loadModel(deployed.predictors().intraOpThreads()));
            BenchmarkBase.awaitReady(deployment);
            BatchingDecision batching = deployment.batching().orElseThrow();
            if (!batching.batched()) {
                throw new IllegalStateException("the fp32 model should batch: " + batching);
            }
            System.out.println("\nmax_batch_size " + maxBatchSize + ", batch limit " + batching.batchLimit(maxBatchSize)
                    + ": " + batching.reason());
        }

        @TearDown(Level.Trial)
        public void stop() {
            engine.close();
        }
    }

    /**
     * One JMH thread's model and predictor (JMH binds each thread-scoped state to one worker thread for the trial, so
     * the predictor is created, used and closed by one thread, as {@link Predictor} requires).
     */
    @State(Scope.Thread)
    public static class RawPredictor {

        @Param({"1", "2", "4", "8", "16", "32"})
        public int batch;

        private Model<String, Embedding> model;
        Predictor<String, Embedding> predictor;

        @Setup(Level.Trial)
        public void load() throws IOException {
            model = loadModel(1);
            predictor = model.newPredictor();
        }

        @TearDown(Level.Trial)
        public void close() {
            predictor.close();
            model.close();
        }
    }

    /** One thread's position in the texts; threads start evenly spread so that they embed different texts. */
    @State(Scope.Thread)
    public static class Cursor {

        private int next;

        @Setup(Level.Trial)
        public void start(ThreadParams thread) {
            next = thread.getThreadIndex() * TEXT_COUNT / thread.getThreadCount();
        }

        String next() {
            String text = TEXTS[next];
            next = (next + 1) & (TEXT_COUNT - 1);
            return text;
        }
    }

    /** The fp32 all-MiniLM-L6-v2 from the class path, copied once to {@code ${java.io.tmpdir}/serval-bench-models}. */
    static Model<String, Embedding> loadModel(int intraOpThreads) throws IOException {
        Path directory = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
        ClassLoader classLoader = BatchSizeBenchmark.class.getClassLoader();
        return TextModels.embedding(
                ModelFiles.extract(classLoader, "all-minilm-l6-v2.onnx", directory),
                ModelFiles.extract(classLoader, "all-minilm-l6-v2-tokenizer.json", directory),
                ModelKind.TEXT_EMBEDDING.defaultOutput(),
                OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(256).withIntraOpThreads(intraOpThreads));
    }
}
