package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.serval.model.BatchingDecision;
import dev.serval.model.onnx.OnnxGraph;
import dev.serval.model.onnx.OnnxModel;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * Measures, once when a model with independent rows loads, which batch sizes pay on this CPU: the best batch size is a
 * property of the CPU (batch 1 was best on one machine with fast int8 units, length-sorted batches of 16-32 were 1.35
 * times faster per text on another), so it is measured, never assumed.
 *
 * <p>How. On one predictor, over a fixed set of short synthetic texts of typical length (15 to 17 words, about 20
 * tokens), it measures the cost per text of batch 1, then of 2, 4, 8, ... up to the largest size allowed. Each new size
 * is sampled twice, with the best size so far sampled again in between, and each size's cost is the minimum of its
 * samples (other work on a shared machine only ever adds time, so the fastest sample is the least disturbed one). A
 * size becomes the best only when it costs at least {@link #GAIN} less per text than the best so far. The probe stops
 * after {@link #PATIENCE} sizes in a row that did not (one is not enough: on a 2-core AVX2 machine the fp32 MiniLM ran
 * batch 2 no faster than batch 1, and batch 8 much faster), at the largest size, or when the next step would overrun
 * the time {@link #BUDGET}.
 *
 * <p>What it decides: where the batch size starts, whether batching pays on this CPU. When no size was {@link #GAIN}
 * cheaper per text than batch 1, at 1 (a CPU whose int8 units make a text alone as cheap as in company, where batching
 * would only add padding and waiting). When one was, at the deployment's {@code max_batch_size}
 * ({@link BatchingDecision#NO_PREFERENCE}). Which size is best, a sub-second probe on one predictor with texts of equal
 * length cannot tell (on an AVX2 machine its ranking of sizes disagreed with the load benchmark's raw loop over real
 * texts, docs/benchmarks/design-figures.md), and on a busy machine one noisy second can mislead it about batch 1
 * itself; so the size is measured again while serving, under load, by the predictor pool
 * ({@code batching.BatchCosts}), which starts here and moves either way.
 *
 * <p>Answers do not change: only models whose rows are independent (or whose deployment switched batch invariance off)
 * are probed, and the probe's own outputs are discarded. Not thread-safe: used by the loading thread, once.
 */
final class BatchProbe {

    /** The largest batch size probed: {@code max_batch_size}'s default. */
    static final int LARGEST = 32;
    /** How much less per text a larger size must cost than the best so far to become the best. */
    static final double GAIN = 0.05;
    /** The probe stops after this many sizes in a row that did not become the best. */
    static final int PATIENCE = 2;
    /** Texts one sample runs at least (several inferences of a small batch), so that a sample is not one short call. */
    static final int SAMPLE_TEXTS = 8;
    /** The most time the probe takes, warm-up included (a step that would not fit is not started). */
    static final Duration BUDGET = Duration.ofMillis(1500);

    /** Operators whose result for one batch row depends on the other rows. */
    static final Set<String> ROW_COUPLING = Set.of("DynamicQuantizeLinear", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM");
    /** Largest per-element difference between a text alone and in a batch that still counts as the same. */
    static final double INVARIANCE_TOLERANCE = 1e-5;

    private static final String[] WORDS = ("how do I reset my password when the order arrived late and support has not "
            + "answered the email about a refund for the broken package yet please help me find my account settings "
            + "today").split(" ");

    /** One inference over the first {@code rows} texts of the probe's set; its outputs are discarded. */
    @FunctionalInterface
    interface Inference {
        void run(int rows) throws Exception;
    }

    /**
     * What the probe found.
     *
     * @param preferred 1 when batching does not pay, else {@link BatchingDecision#NO_PREFERENCE}
     * @param evidence  the measured texts/s per size, why the probe stopped, and what it chose
     */
    record Result(int preferred, String evidence) {
    }

    /**
     * Whether rows may share an inference: no row-coupling operator in the graph ({@link #ROW_COUPLING}) and the probe
     * text alone and padded in a batch differing by at most {@link #INVARIANCE_TOLERANCE}; when either fails, rows run
     * alone unless batch invariance is off ({@code invariance} false), which batches them anyway and says so.
     */
    static BatchingDecision decide(Path modelFile, boolean invariance, double probeDifference) throws IOException {
        Set<String> coupling = new TreeSet<>(OnnxGraph.operatorTypes(modelFile));
        coupling.retainAll(ROW_COUPLING);
        String probe = String.format("the probe text alone and padded in a batch differ by up to %.2e", probeDifference);
        String evidence;
        if (!coupling.isEmpty()) {
            evidence = "the graph couples batch rows (" + String.join(", ", coupling) + "); " + probe;
        } else if (probeDifference > INVARIANCE_TOLERANCE) {
            evidence = "no row-coupling operator, but " + probe;
        } else {
            return new BatchingDecision(true, true, "no row-coupling operator; " + probe);
        }
        return invariance ? BatchingDecision.single(evidence + ": every text runs alone")
                : new BatchingDecision(true, false, evidence + "; batch invariance is off, so texts are batched anyway");
    }

    private BatchProbe() {
    }

    /**
     * {@code decision} with the batch size measured on {@code predictor}; {@code decision} itself when it does not
     * batch. The texts are tokenised once, before timing: only inference is measured, the part batching changes.
     */
    static <O> BatchingDecision sized(BatchingDecision decision,
            OnnxModel.Runner<Encoding[], List<O>> predictor, HuggingFaceTokenizer tokenizer) throws Exception {
        if (!decision.batched()) {
            return decision;
        }
        Encoding[] texts = new Encoding[LARGEST];
        List<String> synthetic = texts(LARGEST);
        for (int i = 0; i < texts.length; i++) {
            texts[i] = LeanEncoding.of(tokenizer, synthetic.get(i));
        }
        Result result = measure(rows -> predictor.predict(Arrays.copyOf(texts, rows)), LARGEST,
                System::nanoTime, BUDGET);
        return result.preferred() == BatchingDecision.NO_PREFERENCE ? decision.withEvidence(result.evidence())
                : decision.withPreferredBatch(result.preferred(), result.evidence());
    }

    /** {@code count} short synthetic texts of 15 to 17 words (about 20 tokens), the same every time. */
    static List<String> texts(int count) {
        List<String> texts = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            StringBuilder text = new StringBuilder();
            for (int w = 0; w < 15 + i % 3; w++) {
                text.append(w == 0 ? "" : " ").append(WORDS[(i * 7 + w * 3) % WORDS.length]);
            }
            texts.add(text.append('.').toString());
        }
        return texts;
    }

    /**
     * Measures batch sizes 1, 2, 4, ... up to {@code largest} with {@code inference}, timed by {@code nanoTime}, for
     * at most about {@code budget}.
     *
     * @throws IllegalArgumentException when {@code largest} is below 1
     * @throws Exception                what the inference throws
     */
    static Result measure(Inference inference, int largest, LongSupplier nanoTime, Duration budget) throws Exception {
        if (largest < 1) {
            throw new IllegalArgumentException("largest must be >= 1, was " + largest);
        }
        List<Integer> sizes = new ArrayList<>();
        for (int size = 1; size <= largest; size *= 2) {
            sizes.add(size);
        }
        double[] cost = new double[sizes.size()]; // nanoseconds per text, the minimum of the samples
        long start = nanoTime.getAsLong();
        long deadline = start + budget.toNanos();
        inference.run(1); // warm-up: the first inference of each shape allocates
        cost[0] = Math.min(sample(inference, 1, nanoTime), sample(inference, 1, nanoTime));
        int best = 0;
        int measured = 1;
        int misses = 0; // sizes in a row that did not beat the best
        String stopped = "batch " + sizes.getLast() + " is the largest probed and still paid";
        for (int i = 1; i < sizes.size(); i++) {
            int size = sizes.get(i);
            long step = (long) (cost[best] * (size + 2L * rowsOf(size) + rowsOf(sizes.get(best))));
            if (nanoTime.getAsLong() + step > deadline) {
                stopped = "the " + budget.toMillis() + " ms budget left no time for batch " + size;
                break;
            }
            inference.run(size);
            double first = sample(inference, size, nanoTime);
            cost[best] = Math.min(cost[best], sample(inference, sizes.get(best), nanoTime));
            cost[i] = Math.min(first, sample(inference, size, nanoTime));
            measured = i + 1;
            if (cost[i] <= cost[best] * (1 - GAIN)) {
                best = i;
                misses = 0;
            } else if (++misses == PATIENCE) {
                stopped = String.format(Locale.ROOT, "batches %d and %d were not %.0f%% faster per text than batch %d",
                        sizes.get(i - 1), size, GAIN * 100, sizes.get(best));
                break;
            }
        }
        if (measured == sizes.size() && misses > 0 && misses < PATIENCE) {
            stopped = "batch " + sizes.getLast() + ", the largest probed, was not faster";
        }
        StringBuilder evidence = new StringBuilder("batch-size probe, texts/s at batch");
        for (int i = 0; i < measured; i++) {
            evidence.append(i == 0 ? " " : ", ").append(sizes.get(i)).append(": ")
                    .append(Math.round(1e9 / cost[i]));
        }
        evidence.append(String.format(Locale.ROOT, " (%.2f s); %s; ", (nanoTime.getAsLong() - start) / 1e9, stopped));
        if (best == 0) {
            return new Result(1, evidence.append("batching does not pay: preferred batch 1").toString());
        }
        evidence.append(String.format(Locale.ROOT, "batching pays (batch %d: %.0f%% less per text than batch 1), so "
                + "max_batch_size limits batches", sizes.get(best), 100 * (1 - cost[best] / cost[0])));
        return new Result(BatchingDecision.NO_PREFERENCE, evidence.toString());
    }

    /** Inferences of {@code size} texts in one sample. */
    private static int samplesOf(int size) {
        return (SAMPLE_TEXTS + size - 1) / size;
    }

    /** Texts one sample of {@code size} runs. */
    private static long rowsOf(int size) {
        return (long) samplesOf(size) * size;
    }

    /** Nanoseconds per text over {@link #samplesOf} inferences of {@code size} texts. */
    private static double sample(Inference inference, int size, LongSupplier nanoTime) throws Exception {
        int inferences = samplesOf(size);
        long start = nanoTime.getAsLong();
        for (int k = 0; k < inferences; k++) {
            inference.run(size);
        }
        return (double) (nanoTime.getAsLong() - start) / rowsOf(size);
    }
}
