package dev.serval.model;

import java.util.List;

/**
 * A text model's tokenizer as a tokenizer API shows it (TEI's {@code /tokenize} and {@code /decode}): the tokens a text
 * becomes as the model reads it, and the text of token ids. Thread-safe.
 */
public interface TextTokenizer {

    /**
     * The tokens of {@code text} as the model reads it: truncated at its {@code max_length} (special tokens included
     * when {@code addSpecialTokens}), and tokenised on a bounded prefix of a long text when that cannot change them.
     */
    List<Token> tokenize(String text, boolean addSpecialTokens);

    /** The most tokens the model reads of one text (one window, for a text read in windows): its {@code max_length}. */
    int maxLength();

    /**
     * The text of {@code ids}.
     *
     * @throws IllegalArgumentException when an id is not in the tokenizer's vocabulary
     */
    String decode(long[] ids, boolean skipSpecialTokens);

    /**
     * One token.
     *
     * @param id      its id in the vocabulary
     * @param text    the text it stands for: the characters of the input it covers, or the special token itself
     * @param special whether it is a special token ({@code [CLS]}, {@code [SEP]}...)
     * @param start   the first character of the input it covers (UTF-16 index), or -1 for a special token
     * @param stop    the character after the last it covers, or -1 for a special token
     */
    record Token(long id, String text, boolean special, int start, int stop) {
    }
}
