package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link LeanEncoding} reads what DJL's full encoding reads, for every kind of text a client may send. */
class LeanEncodingTest {

    private static final Path TOKENIZER = BatchInvarianceTest.minilm()[1];

    private static HuggingFaceTokenizer tokenizer(int maxLength) throws Exception {
        return HuggingFaceTokenizer.builder().optTokenizerPath(TOKENIZER).optAddSpecialTokens(true)
                .optTruncation(true).optMaxLength(maxLength).optPadding(false).build();
    }

    private static List<String> texts() {
        List<String> texts = new ArrayList<>(List.of("", " ", "\t\n", "Hi.", "How do I reset my password?",
                "Ünïcödé, émojis 🦊🧪 and 漢字 mixed with ASCII", "\u0000\u0001 control \u200b zero-width \ufeff",
                "don't split-words; URLs like https://example.com/a?b=c#d", "a".repeat(5_000),
                "word ".repeat(1_000), "\ud83e", "combining e\u0301 and \u00e9"));
        Random random = new Random(16);
        for (int i = 0; i < 200; i++) {
            StringBuilder text = new StringBuilder();
            int length = random.nextInt(300);
            for (int c = 0; c < length; c++) {
                text.append((char) (random.nextBoolean() ? 'a' + random.nextInt(26) : random.nextInt(0x3000)));
            }
            texts.add(text.toString());
        }
        return texts;
    }

    @Test
    void theSameIdsTypesAndMaskAsDjlsEncoding() throws Exception {
        for (int maxLength : new int[] {256, 8}) {
            try (HuggingFaceTokenizer tokenizer = tokenizer(maxLength)) {
                for (String text : texts()) {
                    Encoding full = tokenizer.encode(text);
                    Encoding lean = LeanEncoding.of(tokenizer, text);
                    String what = "max length " + maxLength + ", text of " + text.length() + " chars";
                    assertArrayEquals(full.getIds(), lean.getIds(), what);
                    assertArrayEquals(full.getTypeIds(), lean.getTypeIds(), what);
                    assertArrayEquals(full.getAttentionMask(), lean.getAttentionMask(), what);
                }
                assertEquals(maxLength, LeanEncoding.of(tokenizer, "word ".repeat(1_000)).getIds().length,
                        "truncated at the tokenizer's max length");
            }
        }
    }

    @Test
    void aLongTextReadOnItsPrefixGivesTheTokensOfTheWholeText() throws Exception {
        Random random = new Random(37);
        StringBuilder words = new StringBuilder();
        while (words.length() < 60_000) {
            words.append("token").append(random.nextInt(1000)).append(random.nextBoolean() ? " " : ", ");
        }
        StringBuilder sparse = new StringBuilder(); // long words of one [UNK] each: few tokens per character
        while (sparse.length() < 60_000) {
            sparse.append("x".repeat(150 + random.nextInt(50))).append(' ');
        }
        List<String> long_ = List.of("漢字".repeat(40_000), "word ".repeat(20_000), "a".repeat(100_000),
                words.toString(), sparse.toString(), "🦊".repeat(30_000), "mixed 漢字 and ascii ".repeat(5_000),
                "x".repeat(2 * 8 * 16 - 1) + "🦊" + "y".repeat(500));
        for (int maxLength : new int[] {256, 8}) {
            try (HuggingFaceTokenizer tokenizer = tokenizer(maxLength)) {
                for (String text : long_) {
                    Encoding whole = LeanEncoding.of(tokenizer, text);
                    Encoding read = LeanEncoding.truncated(tokenizer, text, maxLength);
                    String what = "max length " + maxLength + ", text of " + text.length() + " chars";
                    assertArrayEquals(whole.getIds(), read.getIds(), what);
                    assertArrayEquals(whole.getTypeIds(), read.getTypeIds(), what);
                    assertArrayEquals(whole.getAttentionMask(), read.getAttentionMask(), what);
                }
                for (String text : texts()) {
                    assertArrayEquals(LeanEncoding.of(tokenizer, text).getIds(),
                            LeanEncoding.truncated(tokenizer, text, maxLength).getIds());
                }
            }
        }
    }

    @Test
    void aPrefixNeverSplitsASurrogatePair() {
        assertEquals("ab", LeanEncoding.prefix("ab🦊", 3), "the fox's high surrogate stays with its low one");
        assertEquals("ab🦊", LeanEncoding.prefix("ab🦊c", 4));
        assertEquals("abc", LeanEncoding.prefix("abcd", 3));
    }

    @Test
    void aClosedTokenizerIsAnErrorNotACrash() throws Exception {
        HuggingFaceTokenizer tokenizer = tokenizer(256);
        tokenizer.close();
        assertThrows(IllegalStateException.class, () -> LeanEncoding.of(tokenizer, "text"));
        try (HuggingFaceTokenizer open = tokenizer(256)) {
            assertThrows(NullPointerException.class, () -> LeanEncoding.of(open, null));
        }
    }
}
