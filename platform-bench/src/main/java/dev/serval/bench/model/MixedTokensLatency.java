package dev.serval.bench.model;

import dev.serval.bench.BenchmarkBase;
import dev.serval.bench.load.ChatTexts;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Embedding;
import dev.serval.spec.AdmissionSpec;
import dev.serval.spec.BatchingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.HealthSpec;
import dev.serval.spec.PredictorSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * What {@code max_batch_tokens} does for short texts beside long ones (issue 39, item 2): short texts' p99 on the
 * {@code minilm-mixed} texts (1 % of 320+ words, {@link ChatTexts#withLongTexts}) against their p99 on the short
 * texts alone, at 70 % of saturation, on a model whose rows are independent (the fp32 all-MiniLM-L6-v2, see
 * {@link BatchSizeBenchmark#loadModel}), in the engine (a {@link Deployment} of one replica of 2 predictor threads,
 * no HTTP). The run is {@code rounds} rounds, so that a machine whose other load changes weighs on every variant alike:
 * each round measures saturation (3 s of closed loop on the short texts, {@value #OUTSTANDING} requests outstanding),
 * then runs every budget's two open loops (short texts, then the mixed ones) of one-text requests with Poisson
 * arrivals at 0.7 of it, each for {@code seconds} after a warm-up of a quarter of that. Per budget, over all rounds:
 * short texts' p50 and p99 alone and beside the long ones, and the ratio of the two p99s.
 *
 * <p>Run from the repository root after {@code ./mvnw -q -B -o -DskipTests package -pl platform-bench -am}:
 * <pre>{@code
 * java -cp platform-bench/target/benchmarks.jar dev.serval.bench.model.MixedTokensLatency 6 8 16384,512,256
 * }</pre>
 */
public final class MixedTokensLatency {

    private static final int OUTSTANDING = 64;
    private static final int LONG_WORDS = 300;

    private MixedTokensLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        int[] budgets = Arrays.stream((args.length > 2 ? args[2] : "16384,256").split(","))
                .mapToInt(Integer::parseInt).toArray();
        List<String> shortTexts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
        List<String> mixed = ChatTexts.withLongTexts(ChatTexts.COUNT, ChatTexts.SEED);
        ServingEngine engine = new ServingEngine();
        try {
            DeploymentSpec spec = DeploymentSpec.defaults("mixed-fp32", "bundled:all-minilm-l6-v2")
                    .withNumReplicas(1)
                    .withPredictors(new PredictorSpec(2, 1, true))
                    .withAdmission(new AdmissionSpec(4096, 4096, 1, AdmissionSpec.DEFAULTS.requestTimeout()))
                    .withHealth(HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofMinutes(10)))
                    .withBatching(BatchingSpec.DEFAULTS);
            Deployment<String, Embedding> deployment = engine.deploy(spec,
                    deployed -> BatchSizeBenchmark.loadModel(deployed.predictors().intraOpThreads()));
            BenchmarkBase.awaitReady(deployment);
            System.out.println("batching: " + deployment.batching().orElseThrow());
            closedLoop(deployment, shortTexts, 5);
            List<List<Long>> alone = new ArrayList<>();
            List<List<Long>> beside = new ArrayList<>();
            for (int b = 0; b < budgets.length; b++) {
                alone.add(new ArrayList<>());
                beside.add(new ArrayList<>());
            }
            for (int round = 0; round < rounds; round++) {
                deployment.update(spec).join();
                double rate = 0.7 * closedLoop(deployment, shortTexts, 3);
                System.out.printf("round %d: open loops at %.0f texts/s%n", round + 1, rate);
                for (int b = 0; b < budgets.length; b++) {
                    deployment.update(spec.withBatching(BatchingSpec.DEFAULTS.withMaxBatchTokens(budgets[b]))).join();
                    for (long latency : openLoop(deployment, shortTexts, rate, seconds)) {
                        alone.get(b).add(latency);
                    }
                    for (long latency : openLoop(deployment, mixed, rate, seconds)) {
                        beside.get(b).add(latency);
                    }
                }
            }
            for (int b = 0; b < budgets.length; b++) {
                long[] a = sorted(alone.get(b));
                long[] m = sorted(beside.get(b));
                System.out.printf("max_batch_tokens %6d: short alone p50 %.2f p99 %.2f ms (%d) | short beside long p50 "
                        + "%.2f p99 %.2f ms (%d) | p99 ratio %.2f%n", budgets[b], ms(a, 0.50), ms(a, 0.99), a.length,
                        ms(m, 0.50), ms(m, 0.99), m.length, ms(m, 0.99) / ms(a, 0.99));
            }
        } finally {
            engine.close();
        }
    }

    private static long[] sorted(List<Long> latencies) {
        long[] sorted = latencies.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    /** Texts per second with {@value #OUTSTANDING} one-text requests always outstanding. */
    private static double closedLoop(Deployment<String, Embedding> deployment, List<String> texts, double seconds)
            throws InterruptedException {
        Semaphore slots = new Semaphore(OUTSTANDING);
        AtomicInteger done = new AtomicInteger();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        int i = 0;
        while (System.nanoTime() < end) {
            slots.acquire();
            deployment.submit(List.of(texts.get(i++ % texts.size()))).whenComplete((r, f) -> {
                done.incrementAndGet();
                slots.release();
            });
        }
        slots.acquire(OUTSTANDING);
        return done.get() / ((System.nanoTime() - start) / 1e9);
    }

    /**
     * Latencies (ns) of the short texts (under {@value #LONG_WORDS} words) of an open loop at {@code rate} one-text
     * requests per second for {@code seconds}, after a warm-up of a quarter of that; sorted.
     */
    private static long[] openLoop(Deployment<String, Embedding> deployment, List<String> texts, double rate,
            int seconds) {
        SplittableRandom random = new SplittableRandom(42);
        long warmUp = (long) (seconds * 1e9 / 4);
        long measured = (long) (seconds * 1e9);
        long[] latencies = new long[(int) (rate * seconds * 2) + 1024];
        AtomicInteger recorded = new AtomicInteger();
        long start = System.nanoTime();
        long next = start;
        int i = 0;
        CompletableFuture<?> last = CompletableFuture.completedFuture(null);
        while (next - start < warmUp + measured) {
            next += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            long now;
            while ((now = System.nanoTime()) < next) {
                LockSupport.parkNanos(next - now);
            }
            String text = texts.get(i++ % texts.size());
            boolean counted = next - start >= warmUp && text.split(" ").length < LONG_WORDS;
            long sent = next;
            last = deployment.submit(List.of(text)).whenComplete((r, f) -> {
                if (f != null) {
                    throw new IllegalStateException(f);
                }
                if (counted) {
                    int slot = recorded.getAndIncrement();
                    if (slot < latencies.length) {
                        latencies[slot] = System.nanoTime() - sent;
                    }
                }
            });
        }
        last.join();
        LockSupport.parkNanos(1_000_000_000L);
        long[] result = Arrays.copyOf(latencies, Math.min(recorded.get(), latencies.length));
        Arrays.sort(result);
        return result;
    }

    private static double ms(long[] sorted, double quantile) {
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] / 1e6;
    }
}
