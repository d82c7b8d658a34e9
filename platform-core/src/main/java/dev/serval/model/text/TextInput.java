package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import dev.serval.error.InvalidInput;
import dev.serval.model.TextPair;

/**
 * What one input of a text kind is, and how it becomes the tokens its graph reads: a single text (embedding,
 * classification; {@link #TEXT}) or a (query, document) pair read as one sequence pair (rerank; {@link #PAIR}). The
 * rest of a text model (batching, probing, padding, the heads) is the same for both ({@link TextModel}). Stateless.
 *
 * @param <I> the input type
 */
interface TextInput<I> {

    /** The input tokenised with special tokens, truncated at {@code maxLength} tokens as the tokenizer truncates. */
    Encoding truncated(HuggingFaceTokenizer tokenizer, I input, int maxLength);

    /**
     * The text a chunked model splits into windows. Only single texts are chunked: a pair kind refuses chunking when
     * it loads, so this is never called for a pair.
     */
    String text(I input);

    /** The input's length in characters, a proxy for its tokens that costs nothing to read. */
    long length(I input);

    /**
     * Refuses an input no model takes: null or empty.
     *
     * @param index the input's position in its request, for the message
     * @throws InvalidInput naming the input and the problem
     */
    void validate(I input, int index);

    /** The input a predictor warms up on, made of {@code text}. */
    I probe(String text);

    /** One text per input. */
    TextInput<String> TEXT = new TextInput<>() {
        @Override
        public Encoding truncated(HuggingFaceTokenizer tokenizer, String input, int maxLength) {
            return LeanEncoding.truncated(tokenizer, input, maxLength);
        }

        @Override
        public String text(String input) {
            return input;
        }

        @Override
        public long length(String input) {
            return input.length();
        }

        @Override
        public void validate(String input, int index) {
            if (input == null) {
                throw new InvalidInput("text " + index + " is null");
            }
            if (input.isEmpty()) {
                throw new InvalidInput("text " + index + " is an empty string");
            }
        }

        @Override
        public String probe(String text) {
            return text;
        }
    };

    /** A query and a document per input, tokenised as a pair, truncated longest first ({@link LeanEncoding#pair}). */
    TextInput<TextPair> PAIR = new TextInput<>() {
        @Override
        public Encoding truncated(HuggingFaceTokenizer tokenizer, TextPair input, int maxLength) {
            return LeanEncoding.pair(tokenizer, input.query(), input.document(), maxLength);
        }

        @Override
        public String text(TextPair input) {
            throw new IllegalStateException("a (query, document) pair is truncated, never split into windows");
        }

        @Override
        public long length(TextPair input) {
            return input.length();
        }

        @Override
        public void validate(TextPair input, int index) {
            if (input == null) {
                throw new InvalidInput("pair " + index + " is null");
            }
            if (input.query().isEmpty()) {
                throw new InvalidInput("the query is an empty string");
            }
            if (input.document().isEmpty()) {
                throw new InvalidInput("document " + index + " is an empty string");
            }
        }

        @Override
        public TextPair probe(String text) {
            return new TextPair("warm-up query", text);
        }
    };
}
