package dev.serval.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one Retry-After estimate: the work ahead and the caller's own at the observed pace, 1 ms to 60 s. */
class RetryAfterTest {

    @Test
    void beforeAnythingIsObservedEachUnitAheadCountsTenMilliseconds() {
        assertEquals(Duration.ofMillis(30), RetryAfter.completionPaced(0).estimate(2));
        assertEquals(Duration.ofMillis(10), RetryAfter.servicePaced(1).estimate(0));
    }

    @Test
    void completionsFeedThePaceBySixteenthsOfTheirInterval() {
        RetryAfter retryAfter = RetryAfter.completionPaced(0);

        retryAfter.completedAt(26_000_000); // an interval of 26 ms: the pace moves 1/16 of the way, to 11 ms

        assertEquals(Duration.ofMillis(11), retryAfter.estimate(0));
        assertEquals(Duration.ofMillis(33), retryAfter.estimate(2));
    }

    @Test
    void serviceTimesFeedThePaceByEighthsAndParallelServersDrainFaster() {
        RetryAfter retryAfter = RetryAfter.servicePaced(2);
        retryAfter.reset(4_000_000); // a 4 ms warm-up inference

        assertEquals(Duration.ofMillis(6), retryAfter.estimate(2), "three inputs over two servers at 4 ms each");
        retryAfter.served(12_000_000); // 1/8 of the way from 4 to 12 ms: 5 ms
        assertEquals(Duration.ofMillis(8), retryAfter.estimate(2), "ceil(3 x 5 / 2)");
    }

    @Test
    void theHintIsAtLeastOneMillisecondAndAtMostAMinute() {
        RetryAfter fast = RetryAfter.servicePaced(4);
        fast.reset(1_000);
        RetryAfter slow = RetryAfter.servicePaced(1);
        slow.reset(Long.MAX_VALUE / 2);

        assertEquals(RetryAfter.MIN, fast.estimate(0));
        assertEquals(RetryAfter.MAX, slow.estimate(Integer.MAX_VALUE), "no overflow, capped");
    }

    @Test
    void aNegativePaceFromAClockThatWentBackCountsAsZero() {
        RetryAfter retryAfter = RetryAfter.completionPaced(1_000_000_000);
        retryAfter.reset(-5);

        assertEquals(RetryAfter.MIN, retryAfter.estimate(10));
    }

    @Test
    void needsAtLeastOneServer() {
        assertThrows(IllegalArgumentException.class, () -> RetryAfter.servicePaced(0));
    }
}
