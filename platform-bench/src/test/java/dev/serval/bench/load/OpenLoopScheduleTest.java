package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class OpenLoopScheduleTest {

    @Test
    void spacesRequestsByTheRateWithoutAccumulatingRounding() {
        OpenLoopSchedule schedule = new OpenLoopSchedule(1_000, 3_000);

        assertEquals(1_000, schedule.intendedNanos(0));
        assertEquals(1_000 + 333_333, schedule.intendedNanos(1));
        assertEquals(1_000 + 666_667, schedule.intendedNanos(2));
        assertEquals(1_000 + 1_000_000_000L, schedule.intendedNanos(3_000));
        assertEquals(1_000 + 3_600_000_000_000L, schedule.intendedNanos(3_000L * 3_600));
    }

    @Test
    void everyRequestIntendedAtOrBeforeNowIsDue() {
        OpenLoopSchedule schedule = new OpenLoopSchedule(0, 1_000); // one per millisecond

        assertEquals(1, schedule.firstNotDue(0, 999_999));
        assertEquals(2, schedule.firstNotDue(0, 1_000_000));
        assertEquals(6, schedule.firstNotDue(2, 5_500_000));
        assertEquals(3, schedule.firstNotDue(3, 1_000_000)); // nothing more due: the cursor stays
    }

    @Test
    void rejectsRatesThatAreNotPositiveAndFinite() {
        assertThrows(IllegalArgumentException.class, () -> new OpenLoopSchedule(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new OpenLoopSchedule(0, -5));
        assertThrows(IllegalArgumentException.class, () -> new OpenLoopSchedule(0, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> new OpenLoopSchedule(0, Double.POSITIVE_INFINITY));
    }
}
