package dev.serval.multiplex;

import dev.serval.multiplex.Multiplexer.Tuning;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long a model stays on its replica at least once loaded, before it may be unloaded to make room: {@link
 * Tuning#residencyFactor} times the mean measured load time, at least {@link Tuning#minResidency}, at most
 * {@link #MAX}. When the models asked for do not fit, a replica then changes models at most once per residency, so
 * loading cannot take the CPU away from inference (an LRU of loaded models otherwise thrashes: one load costs many
 * inferences' worth of CPU).
 *
 * <p>Design. {@link #nanos} is written by {@link #loaded}, on whichever thread completes a first load, and read by the
 * {@link Placer} under the multiplexer's lock: best-effort (a placement racing a completion uses the residency before
 * it). The mean is the load timer's ({@code serval.multiplex.load}), a thread-safe Micrometer meter.
 */
final class Residency {

    /** The longest residency, whatever a load measured. */
    static final Duration MAX = Duration.ofMinutes(1);

    private final Tuning tuning;
    /** The load timer ({@code serval.multiplex.load}), whose mean the residency follows. */
    private final Timer loadTime;
    /** Written by {@link #loaded} on the thread that completed a first load; read under the lock. */
    private volatile long nanos;

    Residency(Tuning tuning, Timer loadTime) {
        this.nanos = tuning.minResidency().toNanos();
        this.tuning = tuning;
        this.loadTime = loadTime;
    }

    /** The residency now, in nanoseconds. */
    long nanos() {
        return nanos;
    }

    /** A model's first load took {@code loadNanos} until it served: timed, and the residency follows the mean. */
    void loaded(long loadNanos) {
        loadTime.record(loadNanos, TimeUnit.NANOSECONDS);
        nanos = Math.max(tuning.minResidency().toNanos(), Math.min(MAX.toNanos(),
                (long) (tuning.residencyFactor() * loadTime.mean(TimeUnit.NANOSECONDS))));
    }
}
