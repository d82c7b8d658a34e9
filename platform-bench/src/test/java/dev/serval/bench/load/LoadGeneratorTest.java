package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LoadGeneratorTest {

    @Test
    void retryAfterIsReadInSecondsAndRefinedByRetryAfterMs() {
        assertEquals(1_000, LoadGenerator.retryAfterMillis("1", null));
        assertEquals(0, LoadGenerator.retryAfterMillis(" 0 ", null));
        assertEquals(35, LoadGenerator.retryAfterMillis("1", "35"));
        assertEquals(2_000, LoadGenerator.retryAfterMillis("2", "soon")); // an unreadable refinement is ignored
    }

    @Test
    void aRefusalWithoutAUsableRetryAfterHeaderHasNoWait() {
        assertEquals(-1, LoadGenerator.retryAfterMillis(null, null));
        assertEquals(-1, LoadGenerator.retryAfterMillis(null, "35")); // retry-after-ms alone is not Retry-After
        assertEquals(-1, LoadGenerator.retryAfterMillis("Wed, 21 Oct 2026 07:28:00 GMT", null));
        assertEquals(-1, LoadGenerator.retryAfterMillis("-3", null));
    }
}
