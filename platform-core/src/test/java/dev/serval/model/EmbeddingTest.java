package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class EmbeddingTest {

    @Test
    void aCutKeepsTheFirstComponentsNormalisedAgainAndLeavesTheEmbeddingAlone() {
        float[] vector = {0.6f, 0.0f, 0.8f, 0.0f};
        Embedding full = new Embedding(vector, 7);

        Embedding cut = full.cut(2);

        assertArrayEquals(new float[] {1.0f, 0.0f}, cut.vector(), 1e-6f);
        assertEquals(7, cut.tokens());
        assertArrayEquals(new float[] {0.6f, 0.0f, 0.8f, 0.0f}, full.vector(), "the full vector is unchanged");
        assertArrayEquals(new float[] {0.6f, 0.0f, 0.8f}, full.cut(3).vector(), 1e-6f);
        assertArrayEquals(new float[] {0.0f}, new Embedding(new float[] {0f, 1f}, 1).cut(1).vector(),
                "a zero prefix stays zero");
        assertThrows(IllegalArgumentException.class, () -> full.cut(5));
        assertThrows(IllegalArgumentException.class, () -> full.cut(0));
    }

    @Test
    void theUnnormalisedFormIsTheVectorTimesItsNormAndACutKeepsItsPrefix() {
        Embedding pooled = new Embedding(new float[] {0.6f, 0.0f, 0.8f, 0.0f}, 7, 5f);

        assertArrayEquals(new float[] {3f, 0f, 4f, 0f}, pooled.unnormalised(), 1e-6f);
        Embedding cut = pooled.cut(2);
        assertArrayEquals(new float[] {1f, 0f}, cut.vector(), 1e-6f);
        assertArrayEquals(new float[] {3f, 0f}, cut.unnormalised(), 1e-6f, "the first components of the pooled vector");
        assertThrows(IllegalArgumentException.class, () -> new Embedding(new float[1], 1, Float.NaN));
        assertThrows(IllegalArgumentException.class, () -> new Embedding(new float[1], 1, -1f));
    }
}
