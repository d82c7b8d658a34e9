package dev.serval.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class DeploymentMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DeploymentMetrics metrics = DeploymentMetrics.create(registry, "d");

    @Test
    void aHistogramIsRegisteredWithItsFirstObservationAndCountersWithTheDeployment() {
        assertNotNull(registry.find("serval.replica.starts").counter(), "counters from the start");
        assertNull(registry.find("serval.inference").timer());
        assertNull(registry.find("serval.batch.size").summary());
        assertEquals(0, metrics.inferenceHistogram().takeSnapshot().count(), "an empty reading before");

        metrics.inference(1_000_000);
        metrics.batch(3, 30, 6);

        Timer inference = registry.get("serval.inference").tag("deployment", "d").timer();
        assertEquals(1, inference.count());
        assertSame(inference, metrics.inferenceHistogram(), "readers see the registered histogram");
        assertEquals(1, registry.get("serval.batch.size").summary().count());
        assertNull(registry.find("serval.queue.wait").timer(), "only what was observed");
    }

    @Test
    void aHistogramFirstObservedAfterTheDeploymentsMetersWereRemovedNeverRegisters() {
        metrics.inference(1);
        metrics.removeAll();

        metrics.inference(1);
        metrics.queueWait(1);

        assertNull(registry.find("serval.inference").timer(), "the removed one stays removed");
        assertNull(registry.find("serval.queue.wait").timer(), "a late first observation registers nothing");
        assertEquals(0, registry.getMeters().size());
    }
}
