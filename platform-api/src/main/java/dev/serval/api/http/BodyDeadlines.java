package dev.serval.api.http;

import io.vertx.core.Vertx;

/**
 * Request bodies that stop coming. The request deadline is armed once a body is decoded, and nothing else would end a
 * body that stalls but the connection's idle timeout (30 minutes, and reset by every byte): a client that stalls
 * enough partial uploads holds {@code serval.http.max-buffered-bytes} and every other request is refused. So a body
 * must have arrived within {@code serval.http.body-timeout} of its request's headers, or the request is ended
 * ({@link Reading#expire}: 408 and the connection closed; its bytes go back to the budget).
 *
 * <p>Design. One instance per event loop (a thread local: a request's body is read on its connection's event loop
 * alone), holding an intrusive doubly-linked list of the bodies being read there, oldest first (every body has the same
 * timeout, so the order the headers came is the order they expire). A body is linked on its headers and unlinked when
 * it is in or its request ended: no allocation and no timer per request. A periodic timer on the loop (every quarter
 * of the timeout, at most every second) ends the bodies past it. Writers and readers: the event loop only.
 */
final class BodyDeadlines {

    /** A body being read, on its event loop's list. */
    abstract static class Reading {
        private Reading older;
        private Reading newer;
        private boolean linked;

        /** Whether it is on a list now. */
        final boolean linked() {
            return linked;
        }

        /** When its time started ({@link System#nanoTime}): its request's headers, or its message's first bytes. */
        abstract long startNanos();

        /** Its time is up: ends the request (already unlinked). */
        abstract void expire();
    }

    private static final ThreadLocal<BodyDeadlines> ON_THIS_LOOP = new ThreadLocal<>();

    private final long timeoutNanos;
    private Reading oldest;
    private Reading newest;

    BodyDeadlines(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * This event loop's bodies (called on the loop), with its sweep started the first time: {@code vertx} schedules
     * the periodic timer on the calling loop.
     */
    static BodyDeadlines onThisLoop(Vertx vertx, long timeoutNanos) {
        BodyDeadlines deadlines = ON_THIS_LOOP.get();
        if (deadlines == null) {
            deadlines = new BodyDeadlines(timeoutNanos);
            ON_THIS_LOOP.set(deadlines);
            BodyDeadlines sweeping = deadlines;
            long period = Math.max(1, Math.min(1000, timeoutNanos / 4_000_000));
            vertx.setPeriodic(period, id -> sweeping.expireOlderThan(System.nanoTime() - timeoutNanos));
        }
        return deadlines;
    }

    /** Adds {@code reading}, the newest. */
    void link(Reading reading) {
        if (reading.linked) {
            return;
        }
        reading.linked = true;
        reading.older = newest;
        reading.newer = null;
        if (newest == null) {
            oldest = reading;
        } else {
            newest.newer = reading;
        }
        newest = reading;
    }

    /** Removes {@code reading}; nothing when it is not linked. */
    void unlink(Reading reading) {
        if (!reading.linked) {
            return;
        }
        reading.linked = false;
        if (reading.older == null) {
            oldest = reading.newer;
        } else {
            reading.older.newer = reading.newer;
        }
        if (reading.newer == null) {
            newest = reading.older;
        } else {
            reading.newer.older = reading.older;
        }
        reading.older = null;
        reading.newer = null;
    }

    /** Ends every body whose headers came before {@code nanos}. */
    void expireOlderThan(long nanos) {
        while (oldest != null && oldest.startNanos() - nanos < 0) {
            Reading expired = oldest;
            unlink(expired);
            expired.expire();
        }
    }
}
