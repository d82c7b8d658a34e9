package dev.serval.bench.model;

import dev.serval.bench.BenchmarkBase;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Embedding;
import dev.serval.model.ModelFiles;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelKind;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.HealthSpec;
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

/**
 * What batch invariance costs on the default model: texts per second at saturation for short chat-like texts, with
 * invariance on (the quantised MiniLM couples batch rows, so every text runs alone on 2 single-threaded
 * predictors) against invariance switched off (the same 2 predictors take up to 32 queued texts per inference,
 * grouped by token length). Same texts, same threads, same run.
 *
 * <p>Saturation: each invocation submits a burst of {@value #BURST} one-text requests at once and waits for all of
 * them, so a predictor always finds texts queued (and, with invariance off, batches them). One operation is one
 * text, so scores are texts/s. The texts are {@link EmbeddingBenchmark}'s 256 seeded chat-like texts.
 *
 * <p>Run from the repository root (about 2 minutes on two cores):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar BatchInvarianceBenchmark
 * }</pre>
 */
public class BatchInvarianceBenchmark extends BenchmarkBase {

    static final int BURST = 64;
    private static final String[] TEXTS = EmbeddingBenchmark.chatTexts(256, 20240607L);

    @State(Scope.Benchmark)
    public static class Served {

        /** {@code true}: the default, every text alone; {@code false}: batches of up to 32. */
        @Param({"true", "false"})
        public boolean invariance;

        ServingEngine engine;
        Deployment<String, Embedding> deployment;
        int next;

        @Setup(Level.Trial)
        public void start() throws Exception {
            Path dir = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
            ClassLoader loader = BatchInvarianceBenchmark.class.getClassLoader();
            Path model = ModelFiles.extract(loader, "all-minilm-l6-v2-q.onnx", dir);
            Path tokenizer = ModelFiles.extract(loader, "all-minilm-l6-v2-q-tokenizer.json", dir);
            DeploymentSpec spec = DeploymentSpec.defaults("bench", "bundled:all-minilm-l6-v2-q")
                    .withAdmission(new AdmissionSpec(BURST * 2, BURST * 4, 1, AdmissionSpec.DEFAULTS.requestTimeout()))
                    .withHealth(HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofMinutes(10)))
                    .withBatching(new BatchingSpec(invariance, 32, Duration.ofMillis(2)));
            engine = new ServingEngine();
            deployment = engine.deploy(spec, s -> TextModels.embedding(model, tokenizer,
                    ModelKind.TEXT_EMBEDDING.defaultOutput(), OnnxOptions.none(),
                    LoadOptions.defaults().withMaxLength(256).withBatchInvariance(s.batching().batchInvariance())));
            BenchmarkBase.awaitReady(deployment);
            if (deployment.batching().orElseThrow().batched() == invariance) {
                throw new IllegalStateException("unexpected batching: " + deployment.batching().orElseThrow());
            }
        }

        @TearDown(Level.Trial)
        public void stop() {
            engine.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int burstOfShortTexts(Served served) {
        List<CompletableFuture<List<Embedding>>> answers = new ArrayList<>(BURST);
        for (int i = 0; i < BURST; i++) {
            answers.add(served.deployment.submit(List.of(TEXTS[served.next++ & 255])));
        }
        int dimensions = 0;
        for (CompletableFuture<List<Embedding>> answer : answers) {
            dimensions += answer.join().getFirst().vector().length;
        }
        return dimensions;
    }
}
