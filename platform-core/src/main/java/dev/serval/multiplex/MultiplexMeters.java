package dev.serval.multiplex;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;

/**
 * The meters of one multiplexed deployment, registered once when its {@link Multiplexer} is built and removed when it
 * closes (never per request). Counters and the timer are thread-safe Micrometer meters, incremented under the
 * multiplexer's lock or by a load's completion on any thread; the gauge reads the {@link ModelTable} without a lock.
 */
final class MultiplexMeters {

    /** Models loaded onto a replica: on demand, or to spread a hot model. */
    final Counter loads;
    /** Models unloaded from a replica: to make room, after a failed load, once cooled down, or gone. */
    final Counter evictions;
    /** From the request that asked for an unloaded model to its model serving. */
    final Timer loadTime;
    private final Gauge loaded;
    private final MeterRegistry registry;

    MultiplexMeters(String deployment, ModelTable<?> table, MeterRegistry registry) {
        this.registry = registry;
        this.loads = Counter.builder("serval.multiplex.loads").tag("deployment", deployment)
                .description("Models a multiplexed deployment loaded onto a replica: on demand, or to spread a hot "
                        + "model").register(registry);
        this.evictions = Counter.builder("serval.multiplex.evictions").tag("deployment", deployment)
                .description("Models a multiplexed deployment unloaded from a replica: to make room, after a failed "
                        + "load, once a spread model cooled down, or because they left the repository")
                .register(registry);
        this.loadTime = Timer.builder("serval.multiplex.load").tag("deployment", deployment)
                .description("From the request that asked for an unloaded model to its model serving")
                .register(registry);
        this.loaded = Gauge.builder("serval.multiplex.models.loaded", table, ModelTable::loadedCount)
                .tag("deployment", deployment).description("Models the replicas of a multiplexed deployment hold, "
                        + "summed over its replicas").register(registry);
    }

    /** Removes every meter from the registry (the deployment closed). */
    void remove() {
        for (Meter meter : List.<Meter>of(loads, evictions, loadTime, loaded)) {
            registry.remove(meter);
        }
    }
}
