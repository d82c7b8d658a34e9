package dev.serval.model;

import java.util.List;

/**
 * What admission counts a text model's request at ({@code max_pending_tokens}), before anything is tokenised: each
 * input at most its code points plus its special tokens, never more than the model reads of one input
 * ({@link Model#maxInputTokens}). A WordPiece or BPE token spans at least one character, so a text of {@code n} code
 * points is at most {@code n + 2} tokens with [CLS] and [SEP] (a byte-level BPE may split a rare character into
 * several: an estimate, not a bound; {@code max_tokens_per_request} bounds what a request reads). Read on request
 * threads (the event loop): it loops over the inputs once and allocates nothing.
 */
public final class TokenEstimate {

    /** [CLS] and [SEP] around one text. */
    static final int TEXT_SPECIAL_TOKENS = 2;
    /** [CLS] query [SEP] document [SEP]. */
    static final int PAIR_SPECIAL_TOKENS = 3;

    private TokenEstimate() {
    }

    /**
     * The estimated tokens of {@code inputs}: each text (a {@link String}) its code points + 2, each (query, document)
     * {@link TextPair} both texts' code points + 3, each at most {@code maxInputTokens}; 0 when {@code maxInputTokens}
     * is 0 (a model that reads no tokens) and for inputs that are not text.
     */
    public static long of(List<?> inputs, long maxInputTokens) {
        if (maxInputTokens <= 0) {
            return 0;
        }
        long total = 0;
        for (int i = 0, n = inputs.size(); i < n; i++) {
            long tokens = switch (inputs.get(i)) {
                case String text -> codePoints(text) + TEXT_SPECIAL_TOKENS;
                case TextPair pair -> codePoints(pair.query()) + codePoints(pair.document()) + PAIR_SPECIAL_TOKENS;
                case null, default -> 0;
            };
            total += Math.min(tokens, maxInputTokens);
        }
        return total;
    }

    private static long codePoints(String text) {
        return text.codePointCount(0, text.length());
    }
}
