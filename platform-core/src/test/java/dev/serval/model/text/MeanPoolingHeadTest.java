package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.model.Embedding;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeanPoolingHeadTest {

    @Test
    void poolsOnlyUnmaskedPositionsThenNormalises() {
        float[] hidden = {
            1, 0,   // token 0
            3, 4,   // token 1
            100, 100 // padding: must not count
        };
        Embedding embedding = MeanPoolingHead.meanPool(hidden, 0, new long[] {1, 1, 0}, 2);
        // mean = (2, 2) -> normalised (0.7071, 0.7071)
        assertArrayEquals(new float[] {(float) Math.sqrt(0.5), (float) Math.sqrt(0.5)}, embedding.vector(), 1e-6f);
        assertEquals(2, embedding.tokens());
        assertEquals(Math.sqrt(8), embedding.norm(), 1e-6, "the mean's length before normalisation");
        assertArrayEquals(new float[] {2, 2}, embedding.unnormalised(), 1e-6f, "the mean itself");
    }

    @Test
    void aZeroVectorStaysZeroInsteadOfBecomingNaN() {
        Embedding embedding = MeanPoolingHead.meanPool(new float[] {0, 0}, 0, new long[] {1}, 2);
        assertArrayEquals(new float[] {0, 0}, embedding.vector());
        assertEquals(0, embedding.norm());
    }

    @Test
    void aTextReadInWindowsIsTheirMeanRenormalisedAndKeepsTheMeansLength() {
        Embedding combined = new MeanPoolingHead("last_hidden_state").combine(List.of(
                new Embedding(new float[] {1, 0}, 3, 5f), new Embedding(new float[] {0, 1}, 4, 7f)));
        assertArrayEquals(new float[] {(float) Math.sqrt(0.5), (float) Math.sqrt(0.5)}, combined.vector(), 1e-6f);
        assertEquals(7, combined.tokens());
        assertArrayEquals(new float[] {0.5f, 0.5f}, combined.unnormalised(), 1e-6f, "the windows' mean");
    }
}
