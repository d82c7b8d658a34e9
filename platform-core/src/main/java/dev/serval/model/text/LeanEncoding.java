package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import java.util.Arrays;
import java.util.Objects;

/**
 * One text tokenised into what a model reads and nothing more: token ids, type ids and attention mask.
 *
 * <p>DJL's {@link HuggingFaceTokenizer#encode(String)} also copies out every token as a Java string, the tokens'
 * character spans and their word, sequence and special-token ids (ten native calls and an object per token), which no
 * model input needs: on the default model that was a fifth of the time spent tokenising a short text (issue 16's
 * profiles). This calls the same native tokenizer, with the settings it was built with (truncation, special tokens),
 * and reads three arrays, so the ids are the same ({@code LeanEncodingTest} holds them to DJL's). Not for a tokenizer
 * that returns overflowing windows (chunking): it reads none. Immutable; as thread-safe as the tokenizer.
 */
public final class LeanEncoding extends Encoding {

    private static final String[] NO_TOKENS = new String[0];
    private static final long[] NONE = new long[0];
    private static final CharSpan[] NO_SPANS = new CharSpan[0];

    private LeanEncoding(long[] ids, long[] typeIds, long[] attentionMask) {
        super(ids, typeIds, NO_TOKENS, NONE, NONE, attentionMask, NONE, NO_SPANS, false, null);
    }

    /**
     * Characters per token of the prefix a long text is first tokenised on ({@link #truncated}): real text, every
     * script included, takes far fewer than this per token.
     */
    static final int PREFIX_CHARS_PER_TOKEN = 16;

    /**
     * {@code text} as {@link #of} encodes it with a tokenizer that truncates to {@code maxTokens}, reading a bounded
     * part of a long text: the tokens a truncating tokenizer keeps come from the text's beginning, but it tokenises the
     * whole text first, so that a client's multi-megabyte text would cost seconds of CPU for 256 tokens. A text longer
     * than twice {@code maxTokens} x {@value #PREFIX_CHARS_PER_TOKEN} characters is tokenised on its first
     * {@code maxTokens} x {@value #PREFIX_CHARS_PER_TOKEN} characters and on twice that: when the first fills the
     * maximum and both give the same tokens, the cut changed none of the kept tokens (a word cut in two would change
     * its tokens in one of them) and that is the answer; otherwise (a text of very few tokens per character) the whole
     * text is tokenised, which such a text makes cheap. Never splits a surrogate pair.
     */
    public static Encoding truncated(HuggingFaceTokenizer tokenizer, String text, int maxTokens) {
        int prefix = maxTokens * PREFIX_CHARS_PER_TOKEN;
        if (text.length() <= 2 * prefix) {
            return of(tokenizer, text);
        }
        Encoding first = of(tokenizer, prefix(text, prefix));
        if (first.getIds().length >= maxTokens) {
            Encoding second = of(tokenizer, prefix(text, 2 * prefix));
            if (Arrays.equals(first.getIds(), second.getIds()) && Arrays.equals(first.getTypeIds(),
                    second.getTypeIds())) {
                return first;
            }
        }
        return of(tokenizer, text);
    }

    /** The first {@code length} characters of {@code text}, one fewer when that would split a surrogate pair. */
    static String prefix(String text, int length) {
        int end = Character.isHighSurrogate(text.charAt(length - 1)) ? length - 1 : length;
        return text.substring(0, end);
    }

    /**
     * The pair ({@code query}, {@code document}) as {@code tokenizer} encodes it, with special tokens ({@code [CLS] query
     * [SEP] document [SEP]}, type ids 0 then 1 for a BERT template) and the tokenizer's truncation at {@code maxTokens}
     * (longest first), reading a bounded part of a long side when that cannot change the result. A side longer than
     * twice {@code maxTokens} x {@value #PREFIX_CHARS_PER_TOKEN} characters is cut to the prefix {@link #truncated}
     * would keep (its first {@code maxTokens} tokens are the whole side's) when the other side is short: within the
     * maximum alone and at most half of it. Longest-first truncation then keeps all of the short side and the long
     * side's first tokens up to the maximum, however long that side is. Otherwise (both sides long, or a side of very
     * few tokens per character) the whole texts are tokenised.
     */
    public static Encoding pair(HuggingFaceTokenizer tokenizer, String query, String document, int maxTokens) {
        int prefix = maxTokens * PREFIX_CHARS_PER_TOKEN;
        boolean longQuery = query.length() > 2 * prefix;
        boolean longDocument = document.length() > 2 * prefix;
        if (longQuery != longDocument && 2 * of(tokenizer, longQuery ? document : query).getIds().length <= maxTokens) {
            return longQuery ? of(tokenizer, bounded(tokenizer, query, maxTokens), document)
                    : of(tokenizer, query, bounded(tokenizer, document, maxTokens));
        }
        return of(tokenizer, query, document);
    }

    /** {@code text}, or the prefix of it {@link #truncated} would encode when that keeps the text's first tokens. */
    static String bounded(HuggingFaceTokenizer tokenizer, String text, int maxTokens) {
        int prefix = maxTokens * PREFIX_CHARS_PER_TOKEN;
        String first = prefix(text, prefix);
        Encoding firstTokens = of(tokenizer, first);
        return firstTokens.getIds().length >= maxTokens
                && Arrays.equals(firstTokens.getIds(), of(tokenizer, prefix(text, 2 * prefix)).getIds()) ? first : text;
    }

    /**
     * {@code query} and {@code document} as {@code tokenizer} encodes the pair, with special tokens and its truncation.
     *
     * @throws IllegalStateException when the tokenizer is closed
     */
    static Encoding of(HuggingFaceTokenizer tokenizer, String query, String document) {
        TokenizersLibrary library = TokenizersLibrary.LIB;
        long encoding = library.encodeDual(tokenizer.getHandle(), query, document, true);
        try {
            return new LeanEncoding(library.getTokenIds(encoding), library.getTypeIds(encoding),
                    library.getAttentionMask(encoding));
        } finally {
            library.deleteEncoding(encoding);
        }
    }

    /**
     * {@code text} as {@code tokenizer} encodes it, with special tokens.
     *
     * @throws IllegalStateException when the tokenizer is closed
     */
    public static Encoding of(HuggingFaceTokenizer tokenizer, String text) {
        Objects.requireNonNull(text, "text");
        TokenizersLibrary library = TokenizersLibrary.LIB;
        long encoding = library.encode(tokenizer.getHandle(), text, true);
        try {
            return new LeanEncoding(library.getTokenIds(encoding), library.getTypeIds(encoding),
                    library.getAttentionMask(encoding));
        } finally {
            library.deleteEncoding(encoding);
        }
    }
}
