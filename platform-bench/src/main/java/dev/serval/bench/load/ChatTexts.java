package dev.serval.bench.load;

import dev.serval.bench.model.EmbeddingBenchmark;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The benchmark texts, generated from a seed so that every run and every process (the load generator, the raw
 * loop's child JVM) builds the same list: short chat-like texts of 5 to 30 words
 * ({@link EmbeddingBenchmark#chatTexts}), optionally with every hundredth one replaced by a text of 320 words or
 * more made by joining its neighbours (over the model's 256-token limit, so it is truncated as served).
 */
public final class ChatTexts {

    /** The seed of the HTTP benchmarks' texts. */
    public static final long SEED = 20261122L;
    /** How many texts a workload cycles through. */
    public static final int COUNT = 2000;
    /** Every this many texts, one is long: 1 %. */
    static final int LONG_EVERY = 100;
    /** The long texts' minimum word count. */
    static final int LONG_WORDS = 320;

    private ChatTexts() {
    }

    /** {@code count} texts of 5 to 30 words. */
    public static List<String> shortTexts(int count, long seed) {
        return List.of(EmbeddingBenchmark.chatTexts(count, seed));
    }

    /** {@link #shortTexts}, with every hundredth text (from the first) made {@value #LONG_WORDS} words or longer. */
    public static List<String> withLongTexts(int count, long seed) {
        String[] chat = EmbeddingBenchmark.chatTexts(count, seed);
        List<String> texts = new ArrayList<>(Arrays.asList(chat));
        for (int i = 0; i < texts.size(); i += LONG_EVERY) {
            StringBuilder text = new StringBuilder();
            int words = 0;
            for (int k = 0; words < LONG_WORDS; k++) {
                String part = chat[(i + k) % chat.length];
                text.append(part).append(' ');
                words += part.split(" ").length;
            }
            texts.set(i, text.toString().trim());
        }
        return List.copyOf(texts);
    }
}
