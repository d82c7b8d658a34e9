package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The dashboard feed's cost is bounded: places to compute, and one whole feed per interval. */
class FeedCostTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final FeedCost cost = new FeedCost(500, now::get);

    @Test
    void atMostTwoAnswersAreComputedAtOnceAndAPlaceComesBackOnExit() {
        assertTrue(cost.tryEnter());
        assertTrue(cost.tryEnter());
        assertFalse(cost.tryEnter(), "a third is refused, not queued");
        cost.exit();
        assertTrue(cost.tryEnter());
    }

    @Test
    void theWholeFeedIsComputedOncePerIntervalAndShared() {
        AtomicInteger computed = new AtomicInteger();
        byte[] first = cost.whole(() -> new byte[] {(byte) computed.incrementAndGet()});
        now.addAndGet(499);
        assertSame(first, cost.whole(() -> new byte[] {(byte) computed.incrementAndGet()}), "within the interval");
        now.addAndGet(1);
        assertEquals(2, cost.whole(() -> new byte[] {(byte) computed.incrementAndGet()})[0], "recomputed after it");
        assertEquals(2, computed.get());
    }
}
