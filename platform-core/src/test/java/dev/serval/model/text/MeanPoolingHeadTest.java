package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

class MeanPoolingHeadTest {

    @Test
    void poolsOnlyUnmaskedPositionsThenNormalises() {
        float[] hidden = {
            1, 0,   // token 0
            3, 4,   // token 1
            100, 100 // padding: must not count
        };
        float[] vector = MeanPoolingHead.meanPoolAndNormalise(hidden, 0, new long[] {1, 1, 0}, 2);
        // mean = (2, 2) -> normalised (0.7071, 0.7071)
        assertArrayEquals(new float[] {(float) Math.sqrt(0.5), (float) Math.sqrt(0.5)}, vector, 1e-6f);
    }

    @Test
    void aZeroVectorStaysZeroInsteadOfBecomingNaN() {
        float[] vector = MeanPoolingHead.meanPoolAndNormalise(new float[] {0, 0}, 0, new long[] {1}, 2);
        assertArrayEquals(new float[] {0, 0}, vector);
    }
}
