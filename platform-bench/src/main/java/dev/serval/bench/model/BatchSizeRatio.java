package dev.serval.bench.model;

import dev.serval.bench.BenchmarkBase;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.Predictor;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.PredictorSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;

/**
 * {@link BatchSizeBenchmark}'s comparison as a plain program that interleaves its variants, for a shared, noisy
 * machine where JMH's one-after-another trials drift apart: in each round, the raw loop at every batch size and the pool
 * each run for a few seconds, in a rotating order. It prints every round, then each variant's median over the rounds:
 * the raw loop's best batch size is the one with the highest median, and the result is the pool's median over that
 * size's median, with the spread of the per-round ratios (pool over that size in the same round, min-max). (The best
 * size of each round would be biased: the maximum of six noisy figures.)
 *
 * <p>The same model, texts and shapes as {@link BatchSizeBenchmark}: the fp32 all-MiniLM-L6-v2, a deployment of one
 * replica with 2 single-threaded predictors whose batch limit is {@code min(max_batch_size 32, probed size)}, driven by
 * two callers submitting bursts of 32 one-text requests; the raw loop is 2 threads, each with its own predictor,
 * embedding texts in calls of {@code batch} texts.
 *
 * <p>A control: the same pool with the probe's choice ignored (its model reports no preferred size), so that
 * {@code max_batch_size} 32 alone limits its batches ({@code pool32}).
 *
 * <p>Run from the repository root (about 2 minutes with the defaults: 6 rounds of 8 variants of 2 s plus a quarter of warm-up):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java --enable-native-access=ALL-UNNAMED -Dai.djl.offline=true -DOPT_OUT_TRACKING=true \
 *     -cp platform-bench/target/benchmarks.jar dev.serval.bench.model.BatchSizeRatio [rounds] [seconds]
 * }</pre>
 */
public final class BatchSizeRatio {

    private static final int[] BATCHES = {1, 2, 4, 8, 16, 32};
    private static final int BURST = BatchSizeBenchmark.BURST;
    private static final String[] TEXTS = EmbeddingBenchmark.chatTexts(256, 20240607L);

    private BatchSizeRatio() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        long nanos = Duration.ofMillis((long) (1000 * (args.length > 1 ? Double.parseDouble(args[1]) : 2))).toNanos();
        DeploymentSpec spec = spec("bench-minilm-fp32");
        try (ServingEngine engine = new ServingEngine()) {
            Deployment<String, Embedding> deployment = engine.deploy(spec,
                    deployed -> BatchSizeBenchmark.loadModel(deployed.predictors().intraOpThreads()));
            BenchmarkBase.awaitReady(deployment);
            BatchingDecision batching = deployment.batching().orElseThrow();
            System.out.println("pool batch limit " + batching.batchLimit(spec.batching().maxBatchSize()) + ": "
                    + batching.reason());
            Deployment<String, Embedding> unlimited = engine.deploy(spec("bench-minilm-fp32-unlimited"),
                    deployed -> new Unlimited(BatchSizeBenchmark.loadModel(deployed.predictors().intraOpThreads())));
            BenchmarkBase.awaitReady(unlimited);
            Model<String, Embedding> model = BatchSizeBenchmark.loadModel(1);
            double[][] raws = new double[rounds][];
            double[] pools = new double[rounds];
            double[] pools32 = new double[rounds];
            for (int round = 0; round < rounds; round++) {
                double[] raw = new double[BATCHES.length];
                double pool = 0;
                double pool32 = 0;
                for (int k = 0; k <= BATCHES.length + 1; k++) {
                    int variant = (k + round) % (BATCHES.length + 2); // rotate which variant runs first
                    if (variant >= BATCHES.length) {
                        Deployment<String, Embedding> target = variant == BATCHES.length ? deployment : unlimited;
                        double texts = measure(nanos, thread -> {
                            List<CompletableFuture<List<Embedding>>> answers = new ArrayList<>(BURST);
                            for (int i = 0; i < BURST; i++) {
                                answers.add(target.submit(List.of(thread.next())));
                            }
                            answers.forEach(CompletableFuture::join);
                            return BURST;
                        }, null);
                        if (variant == BATCHES.length) {
                            pool = texts;
                        } else {
                            pool32 = texts;
                        }
                    } else {
                        int batch = BATCHES[variant];
                        raw[variant] = measure(nanos, thread -> {
                            List<String> texts = new ArrayList<>(batch);
                            for (int i = 0; i < batch; i++) {
                                texts.add(thread.next());
                            }
                            thread.predictor.predictBatch(texts);
                            return batch;
                        }, model);
                    }
                }
                raws[round] = raw;
                pools[round] = pool;
                pools32[round] = pool32;
                StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
                        "round %d: pool %.1f texts/s, pool32 %.1f, raw", round + 1, pool, pool32));
                for (int b = 0; b < raw.length; b++) {
                    line.append(String.format(Locale.ROOT, " b%d %.1f", BATCHES[b], raw[b]));
                }
                System.out.println(line);
            }
            model.close();
            StringBuilder medians = new StringBuilder("medians: raw");
            int best = 0;
            double[] rawMedians = new double[BATCHES.length];
            for (int b = 0; b < BATCHES.length; b++) {
                int size = b;
                rawMedians[b] = median(Arrays.stream(raws).mapToDouble(raw -> raw[size]).toArray());
                best = rawMedians[b] > rawMedians[best] ? b : best;
                medians.append(String.format(Locale.ROOT, " b%d %.1f", BATCHES[b], rawMedians[b]));
            }
            double poolMedian = median(pools);
            System.out.println(medians.append(String.format(Locale.ROOT, ", pool %.1f, pool32 %.1f texts/s", poolMedian,
                    median(pools32))));
            double[] ratios = new double[rounds];
            for (int round = 0; round < rounds; round++) {
                ratios[round] = pools[round] / raws[round][best];
            }
            Arrays.sort(ratios);
            System.out.printf(Locale.ROOT, "pool / raw at its best batch size (%d): %.3f; per round %.3f to %.3f%n",
                    BATCHES[best], poolMedian / rawMedians[best], ratios[0], ratios[rounds - 1]);
            for (int round = 0; round < rounds; round++) {
                ratios[round] = pools32[round] / raws[round][best];
            }
            Arrays.sort(ratios);
            System.out.printf(Locale.ROOT, "pool32 / raw at b%d: %.3f; per round %.3f to %.3f%n", BATCHES[best],
                    median(pools32) / rawMedians[best], ratios[0], ratios[rounds - 1]);
        }
    }

    /** One replica of 2 single-threaded predictors, {@code max_batch_size} 32, room for both callers' bursts. */
    private static DeploymentSpec spec(String name) {
        return DeploymentSpec.defaults(name, "bundled:all-minilm-l6-v2")
                .withNumReplicas(1)
                .withPredictors(new PredictorSpec(2, 1, true))
                .withAdmission(new AdmissionSpec(BURST * 4, BURST * 8, 1, AdmissionSpec.DEFAULTS.requestTimeout()))
                .withHealth(HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofMinutes(10)));
    }

    /** The model with no preferred batch size: {@code max_batch_size} alone limits its batches. */
    private static final class Unlimited extends ForwardingModel<String, Embedding> {

        Unlimited(Model<String, Embedding> model) {
            super(model);
        }

        @Override
        public BatchingDecision batching() {
            BatchingDecision probed = model.batching();
            return new BatchingDecision(probed.batched(), probed.batchInvariant(), probed.reason() + " (ignored)");
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** One of the two measuring threads: its position in the texts and, for the raw loop, its own predictor. */
    private static final class Caller {
        private int next;
        Predictor<String, Embedding> predictor;

        Caller(int start) {
            this.next = start;
        }

        String next() {
            String text = TEXTS[next];
            next = (next + 1) & (TEXTS.length - 1);
            return text;
        }
    }

    @FunctionalInterface
    private interface Step {
        /** Does one unit of work on the calling thread; returns the texts it embedded. */
        int run(Caller caller) throws Exception;
    }

    /** Texts/s of two threads repeating {@code step} for {@code nanos}, after a warm-up of a quarter of that. */
    private static double measure(long nanos, Step step, Model<String, Embedding> model) throws Exception {
        CyclicBarrier start = new CyclicBarrier(2);
        long[] texts = new long[2];
        long[] elapsed = new long[2];
        Thread[] threads = new Thread[2];
        Exception[] failure = new Exception[1];
        for (int t = 0; t < 2; t++) {
            int index = t;
            threads[t] = new Thread(() -> {
                Caller caller = new Caller(index * TEXTS.length / 2);
                try {
                    caller.predictor = model == null ? null : model.newPredictor();
                    long warmEnd = System.nanoTime() + nanos / 4;
                    while (System.nanoTime() < warmEnd) {
                        step.run(caller);
                    }
                    start.await(1, java.util.concurrent.TimeUnit.MINUTES);
                    long begin = System.nanoTime();
                    long done = 0;
                    while (System.nanoTime() - begin < nanos) {
                        done += step.run(caller);
                    }
                    elapsed[index] = System.nanoTime() - begin;
                    texts[index] = done;
                } catch (Exception e) {
                    failure[0] = e;
                } finally {
                    if (caller.predictor != null) {
                        caller.predictor.close();
                    }
                }
            });
            threads[t].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        return texts[0] * 1e9 / elapsed[0] + texts[1] * 1e9 / elapsed[1];
    }
}
