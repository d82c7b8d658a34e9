package dev.serval.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.model.ChunkReduction;
import dev.serval.model.Classification;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The two ways a classifier combines a long text's windows, on windows where they disagree. */
class ChunkReductionTest {

    /** One window sure of label 0, two leaning to label 1. */
    private static final List<Classification> WINDOWS = List.of(
            new Classification(new float[] {0.9f, 0.05f, 0.05f}, 0, 16),
            new Classification(new float[] {0.1f, 0.6f, 0.3f}, 1, 16),
            new Classification(new float[] {0.1f, 0.6f, 0.3f}, 1, 9));

    @Test
    void meanAveragesTheWindowsProbabilities() {
        Classification combined = new ClassifierHead(ChunkReduction.MEAN).combine(WINDOWS);
        assertArrayEquals(new float[] {1.1f / 3, 1.25f / 3, 0.65f / 3}, combined.scores(), 1e-6f);
        assertEquals(1, combined.labelIndex());
        assertEquals(41, combined.tokens());
    }

    @Test
    void maxTakesEachLabelsLargestProbabilityAndRenormalises() {
        Classification combined = new ClassifierHead(ChunkReduction.MAX).combine(WINDOWS);
        assertArrayEquals(new float[] {0.5f, 1 / 3f, 1 / 6f}, combined.scores(), 1e-6f);
        assertEquals(0, combined.labelIndex());
        assertEquals(41, combined.tokens());
    }

    @Test
    void softmaxIsStableForLargeLogits() {
        float[] scores = ClassifierHead.softmax(new float[] {7, 1000, 1000, -5}, 1, 3);
        assertArrayEquals(new float[] {0.5f, 0.5f, 0f}, scores, 1e-6f);
    }
}
