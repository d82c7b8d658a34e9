package dev.serval.api.http;

import dev.serval.error.DeadlineExceeded;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * The deadlines of an event loop's requests: one hashed timing wheel per event loop instead of one Vert.x timer per
 * request.
 *
 * <p>Every inference request has a deadline (its deployment's {@code request-timeout}, or less if the client asks), and
 * its body, and each gRPC message, one of its own ({@code serval.http.body-timeout}, so that a stalled upload cannot
 * hold the byte budget); nearly every one is disarmed long before it expires. A Vert.x timer per request cost a map
 * entry, a task in the loop's scheduled-task heap, and their removal on every answer, a visible share of a no-op
 * request's CPU (docs/benchmarks/design-figures.md). Here arming links a
 * deadline into one of {@link #SLOTS} lists, chosen by the millisecond tick at which it expires, and disarming unlinks
 * it: O(1), no lock, one small object per request. One Vert.x timer per loop sweeps the slots of the ticks that have
 * passed and expires what is due; a deadline more than a turn of the wheel away stays in its slot until its own tick
 * comes round. The timer is armed only while a deadline is pending: for the earliest deadline armed on an idle wheel,
 * then for the next tick whose slot holds a deadline ({@link #occupied}, a bit per slot), never for the empty ticks
 * between. A busy loop's deadlines are its requests' and their bodies' (seconds away) and are mostly disarmed before
 * their slots come round, so the wheel wakes the loop a few times a turn rather than every millisecond (each wake-up a
 * timer task, an {@code epoll_wait} return and a context switch).
 *
 * <p>Precision: a deadline never expires before its time, and expires within about a millisecond after it (plus the
 * loop's lateness): the granularity of Vert.x timers.
 *
 * <p>Writers and readers: the event loop only. A request is armed and disarmed on its connection's loop, which runs the
 * sweep too; nothing here is shared between threads.
 */
public final class RequestDeadlines {

    /** A request's deadline, linked into a slot while armed. */
    public abstract static class Deadline {
        private Deadline previous;
        private Deadline next;
        /** The next due deadline of the slot being swept. */
        private Deadline due;
        private long tick;
        private boolean armed;

        /** Whether it is armed now. */
        public final boolean armed() {
            return armed;
        }

        /** Its time is up: ends its request (already disarmed), on the event loop. */
        protected abstract void expire();
    }

    /** Runs the sweep later on the event loop: Vert.x's timer in production, a hand-driven one in tests. */
    @FunctionalInterface
    interface Timer {
        void after(long millis, Runnable sweep);
    }

    /** Slots in the wheel: a turn is about a second, longer than nearly every request lives. */
    static final int SLOTS = 1024;
    private static final long TICK_NANOS = 1_000_000L;
    /** Longer deadlines are this one (a hundred years), so that no tick overflows. */
    private static final long MAX_MILLIS = 100L * 365 * 24 * 3600 * 1000;
    private static final ThreadLocal<RequestDeadlines> ON_THIS_LOOP = new ThreadLocal<>();

    private final Deadline[] slots = new Deadline[SLOTS];
    /** Bit {@code i % 64} of word {@code i / 64} is set while slot {@code i} holds a deadline. */
    private final long[] occupied = new long[SLOTS / Long.SIZE];
    private final LongSupplier nanoTime;
    private final Timer timer;
    /** Every tick up to this one has been swept. */
    private long swept;
    private int pending;
    /** Whether a sweep is scheduled, and for which tick; a sweep scheduled earlier for a later tick is stale. */
    private boolean scheduled;
    private long scheduledTick;

    RequestDeadlines(LongSupplier nanoTime, Timer timer) {
        this.nanoTime = nanoTime;
        this.timer = timer;
        this.swept = tickOf(nanoTime.getAsLong());
    }

    /** This event loop's wheel (called on the loop): {@code vertx} schedules its sweeps on the calling loop. */
    public static RequestDeadlines onThisLoop(Vertx vertx) {
        if (!Context.isOnEventLoopThread()) {
            throw new IllegalStateException("request deadlines are armed on an event loop, not on "
                    + Thread.currentThread().getName());
        }
        RequestDeadlines deadlines = ON_THIS_LOOP.get();
        if (deadlines == null) {
            deadlines = new RequestDeadlines(System::nanoTime, (millis, sweep) -> vertx.setTimer(millis,
                    id -> sweep.run()));
            ON_THIS_LOOP.set(deadlines);
        }
        return deadlines;
    }

    /**
     * Arms a deadline that fails {@code result} with {@code DeadlineExceeded} (504, {@code DEADLINE_EXCEEDED}) in
     * {@code millis}, which also drops the request from its queue if no predictor has taken it; disarm it once the
     * result is in.
     */
    public Deadline failing(CompletableFuture<?> result, long millis) {
        Deadline deadline = new Deadline() {
            @Override
            protected void expire() {
                result.completeExceptionally(new DeadlineExceeded("the request's deadline of " + millis
                        + " ms passed before the model answered"));
            }
        };
        arm(deadline, millis);
        return deadline;
    }

    /** Arms {@code deadline} to expire {@code millis} from now (at least one tick); re-arms it if it is armed. */
    public void arm(Deadline deadline, long millis) {
        disarm(deadline);
        long now = nanoTime.getAsLong();
        long nowTick = tickOf(now);
        // The first tick whose start is at or after the deadline, and never one already swept.
        long tick = Math.max(Math.ceilDiv(now, TICK_NANOS) + Math.clamp(millis, 1, MAX_MILLIS), swept + 1);
        deadline.tick = tick;
        deadline.armed = true;
        int slot = (int) (tick & (SLOTS - 1));
        Deadline head = slots[slot];
        deadline.previous = null;
        deadline.next = head;
        if (head != null) {
            head.previous = deadline;
        } else {
            occupied[slot >>> 6] |= 1L << slot;
        }
        slots[slot] = deadline;
        pending++;
        if (!scheduled || tick < scheduledTick) {
            schedule(tick, nowTick);
        }
    }

    /** Disarms {@code deadline}; nothing when it is not armed. */
    public void disarm(Deadline deadline) {
        if (!deadline.armed) {
            return;
        }
        deadline.armed = false;
        if (deadline.previous == null) {
            int slot = (int) (deadline.tick & (SLOTS - 1));
            slots[slot] = deadline.next;
            if (deadline.next == null) {
                occupied[slot >>> 6] &= ~(1L << slot);
            }
        } else {
            deadline.previous.next = deadline.next;
        }
        if (deadline.next != null) {
            deadline.next.previous = deadline.previous;
        }
        deadline.previous = null;
        deadline.next = null;
        pending--;
    }

    /** How many deadlines are armed. */
    int pending() {
        return pending;
    }

    private void schedule(long tick, long nowTick) {
        scheduled = true;
        scheduledTick = tick;
        timer.after(Math.max(1, tick - nowTick), () -> sweep(tick));
    }

    /**
     * Expires every deadline whose tick has come, in the slots of the ticks passed since the last sweep (every slot
     * once when more than a turn has passed). The due deadlines of a slot are all unlinked before any expires, so that
     * an expiry that disarms or arms others cannot cut the walk short.
     */
    private void sweep(long scheduledFor) {
        long now = tickOf(nanoTime.getAsLong());
        if (now > swept) {
            long passed = now - swept;
            for (long tick = passed >= SLOTS ? now - SLOTS + 1 : swept + 1; tick <= now; tick++) {
                expireDue(slots[(int) (tick & (SLOTS - 1))], now);
            }
            swept = now;
        }
        if (scheduled && scheduledFor == scheduledTick) {
            scheduled = false;
            if (pending > 0) {
                schedule(nextOccupiedTick(now), now);
            }
        }
    }

    /**
     * The first tick after {@code now} whose slot holds a deadline (a turn later at most: {@code now}'s own slot);
     * called only while one is pending. Its deadlines may be due a turn or more later still; that slot's sweep finds
     * them not due and looks for the next.
     */
    private long nextOccupiedTick(long now) {
        int start = (int) ((now + 1) & (SLOTS - 1));
        int word = start >>> 6;
        long bits = occupied[word] & (-1L << start); // the start word's slots from start on
        for (int scanned = 0; scanned <= occupied.length; scanned++) {
            if (bits != 0) {
                int slot = (word << 6) + Long.numberOfTrailingZeros(bits);
                return now + 1 + ((slot - start) & (SLOTS - 1));
            }
            word = (word + 1) & (occupied.length - 1);
            bits = occupied[word]; // once round, the start word whole: its slots before start are a turn away
        }
        throw new IllegalStateException(pending + " deadlines pending and no slot holds one");
    }

    private void expireDue(Deadline head, long now) {
        Deadline due = null;
        for (Deadline deadline = head; deadline != null; ) {
            Deadline next = deadline.next;
            if (deadline.tick <= now) {
                disarm(deadline);
                deadline.due = due;
                due = deadline;
            }
            deadline = next;
        }
        while (due != null) {
            Deadline next = due.due;
            due.due = null;
            if (!due.armed) { // one armed again by an earlier expiry has a new deadline
                due.expire();
            }
            due = next;
        }
    }

    private static long tickOf(long nanos) {
        return Math.floorDiv(nanos, TICK_NANOS);
    }
}
