package dev.serval.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * int8 and uint8 as sentence-transformers' {@code quantize_embeddings(e, precision, ranges)}: {@code starts = ranges[0]},
 * {@code steps = (ranges[1] - ranges[0]) / 255}, the quotient cast (truncated toward zero), clamped outside the ranges.
 */
class QuantizationRangesTest {

    /** One dimension from -1 to 1.55: steps of 0.01 (in float32, as numpy). */
    private final QuantizationRanges ranges = new QuantizationRanges(new float[] {-1f, 0f}, new float[] {1.55f, 255f});

    @Test
    void truncatesTheScaledValueTowardZeroAfterSubtracting128ForInt8() {
        // dimension 1: starts 0, steps 1: the value itself is the scaled one
        assertEquals(100, ranges.uint8(100.5f, 1));
        assertEquals(-27, ranges.int8(100.5f, 1)); // (int) (100.5 - 128) = (int) -27.5 = -27, not 100 - 128
        assertEquals(127, ranges.int8(255f, 1));
        assertEquals(255, ranges.uint8(255f, 1));
        assertEquals(-128, ranges.int8(0f, 1));
        assertEquals(0, ranges.uint8(0f, 1));
        assertEquals(0, ranges.int8(128.9f, 1));
        assertEquals(-1, ranges.int8(126.5f, 1));
        float step = (1.55f - -1f) / 255f;
        assertEquals((int) ((0.3f - -1f) / step), ranges.uint8(0.3f, 0));
        assertEquals((int) ((0.3f - -1f) / step - 128f), ranges.int8(0.3f, 0));
    }

    @Test
    void clampsValuesOutsideTheRangesWhereNumpysCastWouldWrap() {
        assertEquals(0, ranges.uint8(-5f, 1));
        assertEquals(-128, ranges.int8(-5f, 1));
        assertEquals(255, ranges.uint8(300f, 1));
        assertEquals(127, ranges.int8(300f, 1));
        assertEquals(255, ranges.uint8(2f, 0));
        assertEquals(-128, ranges.int8(-2f, 0));
    }

    @Test
    void encodesAVectorAndAMatryoshkaCutByTheFirstDimensionsRanges() {
        assertArrayEquals(new int[] {ranges.uint8(0.3f, 0), 100}, ranges.encoder(false).apply(new float[] {0.3f, 100.5f}));
        assertArrayEquals(new int[] {ranges.int8(0.3f, 0), -27}, ranges.encoder(true).apply(new float[] {0.3f, 100.5f}));
        assertArrayEquals(new int[] {ranges.int8(0.3f, 0)}, ranges.encoder(true).apply(new float[] {0.3f}));
        assertThrows(IllegalArgumentException.class, () -> ranges.encoder(true).apply(new float[3]));
    }

    @Test
    void refusesRowsOfDifferentWidthsNonFiniteNumbersAndEmptyRanges() {
        assertThrows(IllegalArgumentException.class, () -> new QuantizationRanges(new float[2], new float[] {1f}));
        assertThrows(IllegalArgumentException.class, () -> new QuantizationRanges(new float[0], new float[0]));
        assertThrows(IllegalArgumentException.class,
                () -> new QuantizationRanges(new float[] {Float.NaN}, new float[] {1f}));
        assertThrows(IllegalArgumentException.class, () -> new QuantizationRanges(new float[] {1f}, new float[] {0f}));
    }
}
