package dev.serval.deployment;

import dev.serval.metrics.DeploymentMetrics;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;

/**
 * A deployment's histograms of a request's phases (docs/metrics.md, "The phases of a request") and of batch sizes and
 * inputs per request, for readers that summarise them (the dashboard's sampler). The engine records into them; a
 * reader only takes snapshots. A histogram registers with its first observation: until then it reads as an empty
 * stand-in, so take a new {@code PhaseMeters} for each reading.
 */
public record PhaseMeters(Timer queueWait, Timer predictorWait, Timer batchWait, Timer inference,
        DistributionSummary batchSize, DistributionSummary requestInputs) {

    /** The histograms of {@code metrics}. */
    static PhaseMeters of(DeploymentMetrics metrics) {
        return new PhaseMeters(metrics.queueWaitHistogram(), metrics.predictorWaitHistogram(),
                metrics.batchWaitHistogram(), metrics.inferenceHistogram(), metrics.batchSizeHistogram(),
                metrics.requestInputsHistogram());
    }
}
