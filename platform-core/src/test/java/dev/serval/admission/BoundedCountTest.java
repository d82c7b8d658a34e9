package dev.serval.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BoundedCountTest {

    @Test
    void admitsUpToItsCapacityAndAgainAfterARelease() {
        BoundedCount slots = new BoundedCount(2);
        assertTrue(slots.tryAcquire());
        assertTrue(slots.tryAcquire());
        assertFalse(slots.tryAcquire());
        assertEquals(1, slots.release());
        assertTrue(slots.tryAcquire());
    }

    @Test
    void refusesToGiveBackASlotThatWasNotTaken() {
        BoundedCount slots = new BoundedCount(1);
        assertThrows(IllegalStateException.class, slots::release);
        assertEquals(0, slots.count());
    }

    @Test
    void neverAdmitsMoreThanItsCapacityUnderContention() throws Exception {
        BoundedCount slots = new BoundedCount(3);
        AtomicInteger holding = new AtomicInteger();
        AtomicInteger maxSeen = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000; i++) {
                    if (slots.tryAcquire()) {
                        maxSeen.accumulateAndGet(holding.incrementAndGet(), Math::max);
                        holding.decrementAndGet();
                        slots.release();
                    }
                }
            }));
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertTrue(maxSeen.get() <= 3, "at most 3 holders at once, saw " + maxSeen.get());
        assertEquals(0, slots.count());
    }

    @Test
    void takesAllOfSeveralPlacesOrNone() {
        BoundedCount count = new BoundedCount(5);
        assertTrue(count.tryAcquire(3));
        assertFalse(count.tryAcquire(3), "only two are free");
        assertEquals(3, count.count(), "a refused acquisition takes nothing");
        assertTrue(count.tryAcquire(2));
        assertTrue(count.full());
        assertEquals(1, count.release(4));
    }

    @Test
    void aRaisedOrLoweredLimitHoldsForNewAcquisitionsOnly() {
        BoundedCount count = new BoundedCount(2);
        assertTrue(count.tryAcquire(2));
        count.limit(1);
        assertEquals(2, count.count(), "places taken stay taken");
        assertEquals(1, count.release());
        assertFalse(count.tryAcquire(), "one taken, limit one");
        count.limit(3);
        assertTrue(count.tryAcquire(2));
        assertEquals(3, count.limit());
    }

    @Test
    void aLimitOfZeroRefusesEveryAcquisition() {
        BoundedCount none = new BoundedCount(0);
        assertFalse(none.tryAcquire());
        assertTrue(none.full());
        assertThrows(IllegalArgumentException.class, () -> new BoundedCount(-1));
    }

    @Test
    void aCountNearTheIntRangeNeverWraps() {
        BoundedCount count = new BoundedCount(Integer.MAX_VALUE - 8);
        assertTrue(count.tryAcquire(Integer.MAX_VALUE - 10));
        assertFalse(count.tryAcquire(1_000), "past the limit, not wrapped negative");
        assertTrue(count.tryAcquire(2));
    }
}
