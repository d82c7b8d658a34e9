package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
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
