package dev.serval.model.text;

import ai.djl.huggingface.tokenizers.Encoding;
import dev.serval.model.InputTokens;

/**
 * A text model's input as its predictor tokenised it for a token budget ({@link TextModel.TextPredictor#tokens}): its
 * one encoding when truncated, its windows when chunked, handed back to that predictor's inference of it. Immutable
 * (the array is never written after it is made).
 *
 * @param windows the encodings the model reads, the whole text's first
 * @param count   the tokens of all of them
 */
record TextTokens(Encoding[] windows, int count) implements InputTokens {
}
