package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.tensor.Tensors;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The estimate admission counts a text model's request at ({@code max_pending_tokens}), before anything is
 * tokenised: a text at most its code points plus [CLS] and [SEP], never more than the model reads of one input.
 */
class TokenEstimateTest {

    @Test
    void aTextCountsItsCodePointsAndTwoSpecialTokensUpToTheMostTheModelReads() {
        assertEquals(5 + 2, TokenEstimate.of(List.of("hello"), 256));
        assertEquals(256, TokenEstimate.of(List.of("x".repeat(10_000)), 256), "truncated at max_length");
        assertEquals(10_002, TokenEstimate.of(List.of("x".repeat(10_000)), 64 * 256), "chunked: every window");
        assertEquals(7 + 3 + 256, TokenEstimate.of(List.of("hello", "a", "y".repeat(300)), 256), "summed");
    }

    @Test
    void countsCodePointsNotUtf16Units() {
        String emoji = "\uD83D\uDE00\uD83D\uDE00"; // two code points, four chars
        assertEquals(2 + 2, TokenEstimate.of(List.of(emoji), 256));
        assertEquals(3 + 2, TokenEstimate.of(List.of("été"), 256));
    }

    @Test
    void aPairCountsQueryAndDocumentAndThreeSpecialTokens() {
        assertEquals(5 + 8 + 3, TokenEstimate.of(List.of(new TextPair("query", "document")), 512));
        assertEquals(512, TokenEstimate.of(List.of(new TextPair("query", "d".repeat(5_000))), 512));
    }

    @Test
    void aModelThatReadsNoTokensCostsNothing() {
        assertEquals(0, TokenEstimate.of(List.of("x".repeat(10_000)), 0));
        assertEquals(0, TokenEstimate.of(List.of(new Tensors(List.of())), 256), "a tensor request is not text");
    }

    @Test
    void aModelsAdmissionCostIsTheEstimateAtItsMaxInputTokens() {
        Model<String, String> text = new NoopText(256);
        assertEquals(256 + 7, text.admissionCost(List.of("x".repeat(1_000), "hello")));
        assertEquals(0, new NoopText(0).admissionCost(List.of("hello")));
    }

    /** A model reading {@code maxInputTokens} tokens of a text; nothing else of it is used. */
    private record NoopText(long maxInputTokens) implements Model<String, String> {
        @Override
        public ModelSignature signature() {
            throw new UnsupportedOperationException();
        }

        @Override
        public dev.serval.request.TensorIO<String, String> io() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Predictor<String, String> newPredictor() {
            throw new UnsupportedOperationException();
        }

        @Override
        public String probeInput() {
            return "probe";
        }

        @Override
        public void validate(String input, int index) {
        }

        @Override
        public void close() {
        }
    }
}
