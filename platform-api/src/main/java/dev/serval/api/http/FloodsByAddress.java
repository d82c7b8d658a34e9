package dev.serval.api.http;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per client address, the HTTP/2 connections the server sent away for a reset flood (rapid reset: Netty's
 * ENHANCE_YOUR_CALM on the resets a client sends) within a window. Netty bounds each connection; a client that reconnects after
 * every GOAWAY gets a fresh allowance each time, so it is bounded here by its address: past {@code maxFloods} floods
 * within {@code window} of its first one, the address is barred, and every further HTTP/2 stream from it is refused
 * with its connection, until it has stayed away for {@code window} (each refused stream renews the bar).
 *
 * <p>State: one immutable {@link Record} per address in a concurrent map, replaced whole by {@code compute}. Writers:
 * the event loop of a connection that was sent away ({@link #flooded}) or refused ({@link #barred}). Readers: every
 * event loop, at an HTTP/2 connection's stream; while no address has flooded the map is empty and that read is one
 * {@code isEmpty()}: nothing is looked up or allocated on the request path. Best-effort by design: at most
 * {@code capacity} addresses are remembered (expired ones are dropped first), so a flood from more addresses than
 * that goes partly unremembered; per-address bounds cannot stop a client with that many addresses anyway.
 */
final class FloodsByAddress {

    /** An address's floods in its current window. */
    record Record(long windowStartNanos, int floods) {}

    private final ConcurrentHashMap<String, Record> byAddress = new ConcurrentHashMap<>();
    private final int maxFloods;
    private final long windowNanos;
    private final int capacity;
    private final LongSupplier clock;

    FloodsByAddress(int maxFloods, long windowNanos, int capacity, LongSupplier clock) {
        if (maxFloods < 0 || windowNanos <= 0 || capacity <= 0) {
            throw new IllegalArgumentException("maxFloods >= 0, window > 0 and capacity > 0, not " + maxFloods + ", "
                    + windowNanos + " ns, " + capacity);
        }
        this.maxFloods = maxFloods;
        this.windowNanos = windowNanos;
        this.capacity = capacity;
        this.clock = clock;
    }

    /** Whether any address is remembered: when not, no stream needs its address looked up. */
    boolean anyRemembered() {
        return !byAddress.isEmpty();
    }

    /** Counts a connection from {@code address} sent away for a flood. */
    void flooded(String address) {
        long now = clock.getAsLong();
        if (byAddress.size() >= capacity && !byAddress.containsKey(address)) {
            byAddress.values().removeIf(record -> expired(record, now));
            if (byAddress.size() >= capacity) {
                return; // full of live records: this address goes unremembered (best-effort, see above)
            }
        }
        byAddress.compute(address, (key, record) -> record == null || expired(record, now)
                ? new Record(now, 1)
                : new Record(record.windowStartNanos(), record.floods() + 1));
    }

    /**
     * Whether {@code address} is barred now; a barred address's window starts again (it must stay away for a whole
     * window to be served again). An expired record is forgotten.
     */
    boolean barred(String address) {
        long now = clock.getAsLong();
        Record record = byAddress.computeIfPresent(address, (key, old) -> {
            if (expired(old, now)) {
                return null;
            }
            return old.floods() > maxFloods ? new Record(now, old.floods()) : old;
        });
        return record != null && record.floods() > maxFloods;
    }

    private boolean expired(Record record, long now) {
        return now - record.windowStartNanos() > windowNanos;
    }
}
