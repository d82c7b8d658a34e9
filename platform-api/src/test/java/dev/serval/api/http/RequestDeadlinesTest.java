package dev.serval.api.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** The wheel driven by hand: a clock the test sets and a timer queue the test fires, in time order. */
class RequestDeadlinesTest {

    private static final long MS = 1_000_000L;

    private long now = 5 * MS + 123; // not on a tick's start
    private final PriorityQueue<long[]> timers = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    private final List<Runnable> sweeps = new ArrayList<>();
    private final List<String> expired = new ArrayList<>();
    private final RequestDeadlines wheel = new RequestDeadlines(() -> now, (millis, sweep) -> {
        timers.add(new long[] {now + millis * MS, sweeps.size()});
        sweeps.add(sweep);
    });

    private RequestDeadlines.Deadline deadline(String name) {
        return deadline(name, ignored -> { });
    }

    private RequestDeadlines.Deadline deadline(String name, Consumer<String> onExpiry) {
        return new RequestDeadlines.Deadline() {
            @Override
            protected void expire() {
                expired.add(name);
                onExpiry.accept(name);
            }
        };
    }

    /** Moves the clock to {@code nanos}, firing every timer due by then at its own time, as the event loop would. */
    private void advanceTo(long nanos) {
        while (!timers.isEmpty() && timers.peek()[0] <= nanos) {
            long[] timer = timers.poll();
            now = Math.max(now, timer[0]);
            sweeps.get((int) timer[1]).run();
        }
        now = nanos;
    }

    @Test
    void aDeadlineExpiresOnceItsTimeHasPassedAndNeverBefore() {
        long armedAt = now;
        RequestDeadlines.Deadline a = deadline("a");
        wheel.arm(a, 10);
        advanceTo(armedAt + 10 * MS - 1);
        assertEquals(List.of(), expired);
        assertTrue(a.armed());
        advanceTo(armedAt + 11 * MS + 1);
        assertEquals(List.of("a"), expired);
        assertFalse(a.armed());
        assertEquals(0, wheel.pending());
    }

    @Test
    void aDisarmedDeadlineNeverExpiresAndTheOthersInItsSlotStay() {
        RequestDeadlines.Deadline a = deadline("a");
        RequestDeadlines.Deadline b = deadline("b");
        RequestDeadlines.Deadline c = deadline("c");
        wheel.arm(a, 20);
        wheel.arm(b, 20); // the same slot
        wheel.arm(c, 20);
        wheel.disarm(b); // answered
        wheel.disarm(b); // and its connection closed: nothing more
        advanceTo(now + 30 * MS);
        assertEquals(List.of("a", "c"), expired.stream().sorted().toList());
        wheel.arm(b, 5); // the wheel works on after emptying
        advanceTo(now + 10 * MS);
        assertEquals(3, expired.size());
        assertEquals("b", expired.get(2));
    }

    @Test
    void aDeadlineMoreThanATurnAwayWaitsForItsOwnTickWhenItsSlotComesRound() {
        long armedAt = now;
        wheel.arm(deadline("far"), RequestDeadlines.SLOTS + 7L); // the same slot as a deadline 7 ms away
        wheel.arm(deadline("near"), 7);
        advanceTo(armedAt + 9 * MS);
        assertEquals(List.of("near"), expired);
        advanceTo(armedAt + (RequestDeadlines.SLOTS + 6L) * MS);
        assertEquals(List.of("near"), expired, "not a turn early");
        advanceTo(armedAt + (RequestDeadlines.SLOTS + 9L) * MS);
        assertEquals(List.of("near", "far"), expired);
    }

    @Test
    void aLoopThatFellBehindByTurnsExpiresWhatIsDueAndKeepsTheRest() {
        long armedAt = now;
        for (int i = 1; i <= 50; i++) {
            wheel.arm(deadline("due" + i), i * 70L); // the last at 3.5 s
        }
        wheel.arm(deadline("later"), 10_000);
        // The loop was stalled (a long GC): its timer runs three and a half turns late.
        long late = armedAt + (long) (3.5 * RequestDeadlines.SLOTS) * MS;
        timers.clear();
        now = late;
        sweeps.getLast().run();
        assertEquals(50, expired.size());
        assertEquals(1, wheel.pending());
        advanceTo(armedAt + 10_002 * MS);
        assertEquals("later", expired.getLast());
        assertEquals(0, wheel.pending());
    }

    @Test
    void oneSweepIsScheduledAtATimeAndNoneOnceNothingIsPending() {
        RequestDeadlines.Deadline first = deadline("first");
        wheel.arm(first, 30_000); // an idle wheel: one timer, for this deadline
        assertEquals(1, timers.size());
        assertTrue(Math.abs(now + 30_000 * MS - timers.peek()[0]) <= MS, "for the deadline's tick");
        for (int i = 0; i < 1_000; i++) {
            RequestDeadlines.Deadline request = deadline("r" + i);
            wheel.arm(request, 30_000);
            wheel.disarm(request);
        }
        assertEquals(1, timers.size(), "requests that come and go schedule nothing");
        RequestDeadlines.Deadline sooner = deadline("sooner");
        wheel.arm(sooner, 50); // earlier than the scheduled sweep: one more, for it
        assertEquals(2, timers.size());
        advanceTo(now + 60 * MS);
        assertEquals(List.of("sooner"), expired);
        // While "first" is pending the wheel sweeps when its slot comes round, one timer at a time.
        assertEquals(2, timers.size(), "the stale 30 s timer and the sweep for first's slot");
        wheel.disarm(first);
        advanceTo(now + 31_000 * MS);
        assertTrue(timers.isEmpty(), "nothing pending: no sweep scheduled");
        assertEquals(List.of("sooner"), expired);
    }

    @Test
    void whileOnlyDistantDeadlinesArePendingTheWheelSleepsThroughTheEmptyTicks() {
        long armedAt = now;
        wheel.arm(deadline("distant"), 30_000);
        wheel.arm(deadline("near"), 5);
        advanceTo(armedAt + 3_000 * MS);
        assertEquals(List.of("near"), expired);
        // After "near", only "distant"'s slot holds a deadline: it comes round once a turn (1,024 ticks), about three
        // times in these 3 s, each time a sweep that finds it not due yet; no sweep for the ticks in between.
        assertTrue(sweeps.size() <= 8, sweeps.size() + " sweeps scheduled in 3 s for one distant deadline");
        advanceTo(armedAt + 30_002 * MS);
        assertEquals(List.of("near", "distant"), expired);
        assertTrue(sweeps.size() <= 40, sweeps.size() + " sweeps scheduled in 30 s for one distant deadline");
        assertEquals(0, wheel.pending());
    }

    @Test
    void aSlotEmptiedByDisarmingIsNotSweptButOneStillHoldingADeadlineIs() {
        long armedAt = now;
        RequestDeadlines.Deadline first = deadline("first");
        RequestDeadlines.Deadline second = deadline("second");
        RequestDeadlines.Deadline third = deadline("third");
        RequestDeadlines.Deadline gone = deadline("gone");
        wheel.arm(deadline("early"), 5);
        wheel.arm(first, 20); // one slot: its head disarmed, the rest stays
        wheel.arm(second, 20);
        wheel.disarm(second);
        wheel.arm(third, 40); // another: every deadline in it disarmed
        wheel.arm(gone, 40);
        wheel.disarm(third);
        wheel.disarm(gone);
        wheel.arm(deadline("last"), 500);
        advanceTo(armedAt + 6 * MS);
        assertEquals(List.of("early"), expired);
        advanceTo(armedAt + 21 * MS);
        assertEquals(List.of("early", "first"), expired, "the sweep after 'early' is for the slot 'first' is in");
        int scheduled = sweeps.size();
        advanceTo(armedAt + 499 * MS);
        assertEquals(scheduled, sweeps.size(), "after 'first', the next sweep is for 'last': none for the emptied slot");
        advanceTo(armedAt + 501 * MS);
        assertEquals(List.of("early", "first", "last"), expired);
        assertEquals(0, wheel.pending());
    }

    @Test
    void anExpiryThatDisarmsOrArmsOthersDoesNotCutTheSweepShort() {
        long armedAt = now;
        RequestDeadlines.Deadline[] others = new RequestDeadlines.Deadline[3];
        RequestDeadlines.Deadline rearmed = deadline("rearmed");
        others[0] = deadline("a", ignored -> {
            wheel.disarm(others[1]);
            wheel.arm(rearmed, 100);
            wheel.arm(deadline("new"), 1);
        });
        others[1] = deadline("b");
        others[2] = deadline("c");
        wheel.arm(rearmed, 10);
        for (RequestDeadlines.Deadline other : others) {
            wheel.arm(other, 10);
        }
        advanceTo(armedAt + 12 * MS);
        assertTrue(expired.containsAll(List.of("a", "b", "c")), expired.toString());
        assertFalse(expired.contains("new"), "armed during the sweep, for a later tick");
        assertTrue(rearmed.armed(), "armed anew by a's expiry, whether its old deadline expired first or not");
        long rearmedExpiries = expired.stream().filter("rearmed"::equals).count();
        advanceTo(armedAt + 14 * MS);
        assertTrue(expired.contains("new"));
        advanceTo(armedAt + 113 * MS);
        assertEquals(rearmedExpiries + 1, expired.stream().filter("rearmed"::equals).count());
        assertEquals(0, wheel.pending());
    }
}
