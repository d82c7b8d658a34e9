package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FloodsByAddressTest {

    private static final long WINDOW = 60_000_000_000L;

    private final AtomicLong now = new AtomicLong(1_000);
    private final FloodsByAddress floods = new FloodsByAddress(2, WINDOW, 3, now::get);

    @Test
    void anAddressIsBarredPastItsFloodsWithinTheWindow() {
        assertFalse(floods.anyRemembered());
        floods.flooded("10.0.0.1");
        floods.flooded("10.0.0.1");
        assertFalse(floods.barred("10.0.0.1"), "two floods are allowed");
        floods.flooded("10.0.0.1");
        assertTrue(floods.barred("10.0.0.1"));
        assertFalse(floods.barred("10.0.0.2"), "only the address that flooded");
        assertTrue(floods.anyRemembered());
    }

    @Test
    void floodsSpreadOverMoreThanAWindowAreNotBarred() {
        floods.flooded("10.0.0.1");
        floods.flooded("10.0.0.1");
        now.addAndGet(WINDOW + 1);
        floods.flooded("10.0.0.1");
        assertFalse(floods.barred("10.0.0.1"), "the third flood opened a new window");
    }

    @Test
    void aBarredAddressMustStayAwayAWholeWindow() {
        for (int i = 0; i < 3; i++) {
            floods.flooded("10.0.0.1");
        }
        now.addAndGet(WINDOW - 1);
        assertTrue(floods.barred("10.0.0.1"), "still barred, and the refusal renews the bar");
        now.addAndGet(WINDOW - 1);
        assertTrue(floods.barred("10.0.0.1"), "it came back within a window of its last refusal");
        now.addAndGet(WINDOW + 1);
        assertFalse(floods.barred("10.0.0.1"), "a whole window away: served again");
        assertFalse(floods.anyRemembered(), "and forgotten");
    }

    @Test
    void atCapacityExpiredAddressesMakeRoomAndLiveOnesAreKept() {
        floods.flooded("10.0.0.1");
        floods.flooded("10.0.0.2");
        now.addAndGet(WINDOW / 2);
        floods.flooded("10.0.0.3");
        floods.flooded("10.0.0.4"); // full of live records: not remembered
        for (int i = 0; i < 3; i++) {
            floods.flooded("10.0.0.3");
        }
        assertTrue(floods.barred("10.0.0.3"));
        now.addAndGet(WINDOW / 2 + 1); // 10.0.0.1 and .2 expired, .3 and .4 live
        for (int i = 0; i < 3; i++) {
            floods.flooded("10.0.0.5");
        }
        assertTrue(floods.barred("10.0.0.5"), "room was made from expired records");
        assertTrue(floods.barred("10.0.0.3"), "a live record is kept");
    }

    @Test
    void fullOfLiveRecordsANewAddressGoesUnremembered() {
        floods.flooded("10.0.0.1");
        floods.flooded("10.0.0.2");
        floods.flooded("10.0.0.3");
        for (int i = 0; i < 3; i++) {
            floods.flooded("10.0.0.4");
        }
        assertFalse(floods.barred("10.0.0.4"), "best-effort: at most capacity addresses are remembered");
    }

    @Test
    void boundsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new FloodsByAddress(-1, WINDOW, 1, now::get));
        assertThrows(IllegalArgumentException.class, () -> new FloodsByAddress(1, 0, 1, now::get));
        assertThrows(IllegalArgumentException.class, () -> new FloodsByAddress(1, WINDOW, 0, now::get));
    }
}
