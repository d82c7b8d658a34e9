package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class WindowCountTest {

    private static final long SECOND = 1_000_000_000L;

    @Test
    void theRateRunsFromTheFirstToTheLastInferenceEndingInsideTheWindow() {
        WindowCount count = new WindowCount(10 * SECOND, 14 * SECOND);
        count.ended(9 * SECOND, 32); // warm-up: not counted
        count.ended(10 * SECOND + SECOND / 2, 32); // the first ending: starts the clock, its texts ran before it
        count.ended(11 * SECOND + SECOND / 2, 32);
        count.ended(12 * SECOND + SECOND / 2, 32);
        count.ended(13 * SECOND + SECOND / 2, 32);
        count.ended(14 * SECOND + SECOND / 2, 32); // after the window

        assertEquals(128, count.texts());
        assertEquals(32.0, count.textsPerSecond(), 1e-9); // 96 texts in 3 s, wherever the window cut the batches
    }

    @Test
    void fewerThanTwoEndingsFallBackToTextsOverTheWindow() {
        WindowCount count = new WindowCount(0, 2 * SECOND);
        count.ended(SECOND, 32);

        assertEquals(16.0, count.textsPerSecond(), 1e-9);
        assertEquals(0.0, new WindowCount(0, SECOND).textsPerSecond());
    }

    @Test
    void aWindowMustEndAfterItStarts() {
        assertThrows(IllegalArgumentException.class, () -> new WindowCount(5, 5));
    }
}
