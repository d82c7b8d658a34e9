package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.CharSpan;
import dev.serval.model.TextTokenizer;
import java.util.ArrayList;
import java.util.List;

/**
 * A text model's tokenizer as {@link TextTokenizer} shows it: the model's own (truncating at its {@code max_length}),
 * reading a long text's bounded prefix when that keeps its first tokens ({@link LeanEncoding#bounded}), so that a
 * tokenize request costs what one text of the model costs. Thread-safe, as the tokenizer is; lives as long as its
 * model.
 */
final class TokenizerView implements TextTokenizer {

    private final HuggingFaceTokenizer tokenizer;
    private final int maxLength;

    TokenizerView(HuggingFaceTokenizer tokenizer, int maxLength) {
        this.tokenizer = tokenizer;
        this.maxLength = maxLength;
    }

    @Override
    public List<Token> tokenize(String text, boolean addSpecialTokens) {
        String read = text.length() > 2L * maxLength * LeanEncoding.PREFIX_CHARS_PER_TOKEN
                ? LeanEncoding.bounded(tokenizer, text, maxLength) : text;
        Encoding encoding = tokenizer.encode(read, addSpecialTokens, false);
        long[] ids = encoding.getIds();
        String[] tokens = encoding.getTokens();
        long[] special = encoding.getSpecialTokenMask();
        CharSpan[] spans = encoding.getCharTokenSpans();
        List<Token> out = new ArrayList<>(ids.length);
        for (int i = 0; i < ids.length; i++) {
            boolean isSpecial = special[i] == 1;
            CharSpan span = i < spans.length ? spans[i] : null;
            if (isSpecial || span == null) {
                out.add(new Token(ids[i], tokens[i], isSpecial, -1, -1));
            } else {
                out.add(new Token(ids[i], read.substring(span.getStart(), span.getEnd()), false, span.getStart(),
                        span.getEnd()));
            }
        }
        return out;
    }

    @Override
    public int maxLength() {
        return maxLength;
    }

    @Override
    public String decode(long[] ids, boolean skipSpecialTokens) {
        try {
            return tokenizer.decode(ids, skipSpecialTokens);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("the tokenizer cannot decode these ids: " + e.getMessage(), e);
        }
    }
}
