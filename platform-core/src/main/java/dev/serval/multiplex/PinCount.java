package dev.serval.multiplex;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pins of one multiplexed model: how many requests hold it, or {@link #RETIRING} while an unload decides about
 * it. A {@link Multiplexer.Entry} is one (as {@code ReentrantLock.Sync} is an {@code AbstractQueuedSynchronizer}), so
 * that the request path reaches its pins without another hop.
 *
 * <p>Design. Two states and one count, every transition a CAS on {@link #pins}: a request pins ({@link #pin}: n to
 * n + 1, refused while retiring) on any thread and never blocks; it gives its pin back exactly once ({@link #unpin});
 * an unload, under the multiplexer's lock, retires ({@link #retire}: only from 0) and then either reinstates
 * ({@link #reinstate}: back to 0, the model stays known) or leaves it retiring for good (the model left the
 * repository). So an unload never takes a model a request holds, and a request never holds a model while it is being
 * unloaded, without a lock on the request path.
 */
abstract class PinCount {

    /** {@link #pins} while an unload is deciding about it: no request may pin it then. */
    static final int RETIRING = -1;

    /** Requests holding the model (at least 0), or {@link #RETIRING}. */
    final AtomicInteger pins = new AtomicInteger();

    /** Takes a pin unless an unload is deciding about the entry; a CAS loop, never blocks. */
    final boolean pin() {
        for (;;) {
            int now = pins.get();
            if (now == RETIRING) {
                return false;
            }
            if (pins.compareAndSet(now, now + 1)) {
                return true;
            }
        }
    }

    /** Gives back a pin {@link #pin} took; whether it was the last. */
    final boolean unpin() {
        return pins.decrementAndGet() == 0;
    }

    /** From no pin to {@link #RETIRING}; false when a request holds it. */
    final boolean retire() {
        return pins.compareAndSet(0, RETIRING);
    }

    /** Back from {@link #RETIRING} to no pin. */
    final void reinstate() {
        pins.compareAndSet(RETIRING, 0);
    }
}
