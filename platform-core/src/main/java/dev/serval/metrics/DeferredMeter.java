package dev.serval.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.Function;

/**
 * A meter registered with its first observation, so that a histogram says nothing in the scrape (not seventy
 * zero-count buckets) until it has something to say (docs/metrics.md).
 *
 * <p>Thread-safe, any thread: {@link #get} reads one volatile field; the first callers that find it null register
 * under this object's lock, once for the meter's life, and every later call is the volatile read alone: no lock, no
 * allocation, no registry lookup on the hot path. States: unobserved (null) → registered, or unobserved → retired
 * ({@link #retire}: the deployment's meters were removed; a late observation goes to the stand-in, never registering a
 * series for a deployment that is gone).
 */
final class DeferredMeter<M extends Meter> {

    private final MeterRegistry registry;
    /** Builds and registers the meter (a builder's {@code register}); called at most once. */
    private final Function<MeterRegistry, M> registration;
    /** What readers see before the first observation, and what a retired meter records into: a no-op meter. */
    private final M unobserved;
    /** Null until the first {@link #get} or {@link #retire}; written once, under this object's lock. */
    private volatile M meter;

    DeferredMeter(MeterRegistry registry, Function<MeterRegistry, M> registration, M unobserved) {
        this.registry = registry;
        this.registration = registration;
        this.unobserved = unobserved;
    }

    /** The meter to record into, registered now if this is the first observation. */
    M get() {
        M current = meter;
        return current != null ? current : register();
    }

    /** The meter for readers (snapshots): the registered one, or the no-op stand-in (empty) before. */
    M reading() {
        M current = meter;
        return current != null ? current : unobserved;
    }

    /** Never registers after this (call when the deployment's meters are removed). */
    synchronized void retire() {
        if (meter == null) {
            meter = unobserved;
        }
    }

    private synchronized M register() {
        if (meter == null) {
            meter = registration.apply(registry);
        }
        return meter;
    }
}
