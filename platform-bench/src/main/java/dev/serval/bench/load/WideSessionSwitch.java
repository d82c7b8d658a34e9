package dev.serval.bench.load;

import dev.serval.model.Embedding;
import dev.serval.model.LoadOptions;
import dev.serval.model.ModelKind;
import dev.serval.model.Predictor;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import java.util.Arrays;

/**
 * What a lone inference on the wide session ({@code lend_idle_cores}) costs depending on what ran before it: one
 * predictor of the default model with a wide session of 2 threads, one text run back to back 800 times in each
 * pattern (every inference narrow, every one wide, alternating, and every 64th wide, the rate at which
 * {@code IdleCores} explores), the first 100 of each pattern not counted, the p50 of each way printed. A short and a
 * long text, each pattern twice. The evidence for docs/design-decisions.md ("An idle replica lends its cores"): the
 * first inference on the session the replica has not used lately is cold.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -Dai.djl.offline=true -DOPT_OUT_TRACKING=true \
 *     -cp platform-bench/target/benchmarks.jar dev.serval.bench.load.WideSessionSwitch</pre>
 */
public final class WideSessionSwitch {

    private static final int INFERENCES = 800;
    private static final int WARM_UP = 100;

    private WideSessionSwitch() {
    }

    public static void main(String[] args) throws Exception {
        if (Runtime.getRuntime().availableProcessors() < 2) {
            throw new IllegalStateException("a wide session needs two processors");
        }
        try (var model = TextModels.embedding(RawEmbeddingLoop.modelFile(RawEmbeddingLoop.MODEL),
                RawEmbeddingLoop.modelFile(RawEmbeddingLoop.TOKENIZER), ModelKind.TEXT_EMBEDDING.defaultOutput(),
                OnnxOptions.none(), LoadOptions.defaults().withMaxLength(256).withIdleIntraOpThreads(2));
                Predictor<String, Embedding> predictor = model.newPredictor()) {
            String[] words = "the quick brown fox jumps over the lazy dog and people chat about the weather".split(" ");
            for (int length : new int[] {16, 128}) {
                StringBuilder text = new StringBuilder();
                for (int i = 0; i < length; i++) {
                    text.append(words[i % words.length]).append(' ');
                }
                for (int pass = 0; pass < 2; pass++) {
                    for (int wideEvery : new int[] {0, 1, 2, 64}) {
                        run(predictor, text.toString(), length, wideEvery);
                    }
                }
            }
        }
    }

    /** One pattern: inference i runs wide when {@code wideEvery} is not 0 and divides i. */
    private static void run(Predictor<String, Embedding> predictor, String text, int words, int wideEvery)
            throws Exception {
        long[] wide = new long[INFERENCES];
        long[] narrow = new long[INFERENCES];
        int wides = 0;
        int narrows = 0;
        for (int i = 0; i < INFERENCES; i++) {
            boolean widened = wideEvery != 0 && i % wideEvery == 0;
            predictor.widen(widened);
            long start = System.nanoTime();
            predictor.predict(text);
            long nanos = System.nanoTime() - start;
            if (i >= WARM_UP) {
                if (widened) {
                    wide[wides++] = nanos;
                } else {
                    narrow[narrows++] = nanos;
                }
            }
        }
        String pattern = switch (wideEvery) {
            case 0 -> "every inference narrow";
            case 1 -> "every inference wide";
            default -> "every " + wideEvery + (wideEvery == 2 ? "nd" : "th") + " wide";
        };
        System.out.printf("%3d words, %-24s wide p50 %s, narrow p50 %s%n", words, pattern, p50(wide, wides),
                p50(narrow, narrows));
    }

    private static String p50(long[] nanos, int count) {
        if (count == 0) {
            return "-";
        }
        long[] sorted = Arrays.copyOf(nanos, count);
        Arrays.sort(sorted);
        return String.format("%.3f ms (%d)", sorted[count / 2] / 1e6, count);
    }
}
