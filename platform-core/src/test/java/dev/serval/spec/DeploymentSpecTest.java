package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.model.ChunkReduction;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class DeploymentSpecTest {

    private final DeploymentSpec spec = DeploymentSpec.defaults("d", "m");

    @Test
    void withersReturnTheSameSpecWhenNothingChanges() {
        assertSame(spec, spec.withModel(ModelReference.named("m")));
        assertSame(spec, spec.withVersion("1"));
        assertSame(spec, spec.withNumReplicas(1));
        assertSame(spec, spec.withAdmission(AdmissionSpec.DEFAULTS.withMaxQueuedRequests(256)));
        assertSame(spec, spec.withBatching(BatchingSpec.DEFAULTS.withMaxBatchSize(32)));
        assertSame(spec, spec.withPredictors(new PredictorSpec(2, 1, true)));
        assertSame(spec, spec.withHealth(HealthSpec.DEFAULTS.withMinReadyReplicas(1)));
        assertSame(spec, spec.withRollout(RolloutSpec.DEFAULTS.withRollingUpdateFraction(0.25)));
        assertSame(AdmissionSpec.DEFAULTS, AdmissionSpec.DEFAULTS.withRequestTimeout(Duration.ofSeconds(30)));
        assertSame(HealthSpec.DEFAULTS, HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofSeconds(10)));
    }

    @Test
    void aWitherChangesOnlyItsSection() {
        DeploymentSpec changed = spec.withBatching(spec.batching().withMaxBatchSize(8));

        assertEquals(8, changed.batching().maxBatchSize());
        assertEquals(spec, changed.withBatching(BatchingSpec.DEFAULTS));
    }

    @Test
    void everyBoundIsRefusedNamingItsConfigKey() {
        assertRefused("num_replicas", () -> spec.withNumReplicas(1025));
        assertRefused("name", () -> DeploymentSpec.defaults("Bad Name", "m"));
        assertRefused("version", () -> spec.withVersion(" "));
        assertRefused("max_ongoing_requests", () -> AdmissionSpec.DEFAULTS.withMaxOngoingRequests(0));
        assertRefused("max_queued_requests", () -> AdmissionSpec.DEFAULTS.withMaxQueuedRequests(1_000_001));
        assertRefused("max_inputs_per_request", () -> AdmissionSpec.DEFAULTS.withMaxInputsPerRequest(0));
        assertRefused("request_timeout", () -> AdmissionSpec.DEFAULTS.withRequestTimeout(Duration.ZERO));
        assertRefused("max_batch_size", () -> BatchingSpec.DEFAULTS.withMaxBatchSize(1025));
        assertRefused("batch_wait_timeout", () -> BatchingSpec.DEFAULTS.withBatchWaitTimeout(Duration.ofSeconds(2)));
        assertRefused("predictor_threads", () -> PredictorSpec.DEFAULTS.withPredictorThreads(65));
        assertRefused("intra_op_threads", () -> PredictorSpec.DEFAULTS.withIntraOpThreads(0));
        assertRefused("health_check_period", () -> HealthSpec.DEFAULTS.withHealthCheckPeriod(Duration.ofMillis(5)));
        assertRefused("health_check_failure_threshold", () -> HealthSpec.DEFAULTS.withHealthCheckFailureThreshold(0));
        assertRefused("min_ready_replicas", () -> HealthSpec.DEFAULTS.withMinReadyReplicas(-1));
        assertRefused("rolling_update_fraction", () -> RolloutSpec.DEFAULTS.withRollingUpdateFraction(0));
        assertRefused("graceful_shutdown_timeout",
                () -> RolloutSpec.DEFAULTS.withGracefulShutdownTimeout(Duration.ofSeconds(-1)));
        assertRefused("model", () -> ModelReference.named(""));
        assertRefused("max_length",
                () -> new ModelReference("m", 1, LongInputPolicy.TRUNCATE, 32, ChunkReduction.MEAN, 64));
        assertRefused("chunk_overlap",
                () -> new ModelReference("m", 64, LongInputPolicy.CHUNK, 33, ChunkReduction.MEAN, 64));
        assertRefused("max_chunks_per_input",
                () -> new ModelReference("m", 0, LongInputPolicy.CHUNK, 32, ChunkReduction.MEAN, 0));
    }

    @Test
    void theMessageSaysTheRangeAndTheValue() {
        InvalidSpec e = assertThrows(InvalidSpec.class, () -> BatchingSpec.DEFAULTS.withMaxBatchSize(0));

        assertEquals("must be between 1 and 1024, not 0", e.problem());
        assertEquals("max_batch_size must be between 1 and 1024, not 0", e.getMessage());
    }

    @Test
    void theReplicaShapeIsTheModelReferenceVersionThreadsPerReplicaLimitsAndInvariance() {
        assertTrue(spec.sameReplicaShape(spec.withNumReplicas(4)
                .withAdmission(spec.admission().withMaxQueuedRequests(10).withRequestTimeout(Duration.ofSeconds(1)))
                .withBatching(spec.batching().withMaxBatchSize(4).withBatchWaitTimeout(Duration.ofMillis(2)))
                .withHealth(new HealthSpec(Duration.ofSeconds(1), 1, 0))
                .withRollout(new RolloutSpec(1, Duration.ZERO))
                .withPredictors(spec.predictors().withIdleSpin(Duration.ZERO))));

        assertFalse(spec.sameReplicaShape(spec.withModel(ModelReference.named("other"))));
        assertFalse(spec.sameReplicaShape(spec.withModel(new ModelReference("m", 0, LongInputPolicy.CHUNK, 32,
                ChunkReduction.MEAN, 64))), "a loader option");
        assertFalse(spec.sameReplicaShape(spec.withVersion("2")));
        assertFalse(spec.sameReplicaShape(spec.withPredictors(spec.predictors().withIntraOpThreads(2))));
        assertFalse(spec.sameReplicaShape(spec.withPredictors(spec.predictors().withPredictorThreads(3))));
        assertFalse(spec.sameReplicaShape(spec.withPredictors(spec.predictors().withLendIdleCores(false))));
        assertFalse(spec.sameReplicaShape(spec.withAdmission(spec.admission().withMaxOngoingRequests(1))));
        assertFalse(spec.sameReplicaShape(spec.withAdmission(spec.admission().withMaxInputsPerRequest(1))));
        assertFalse(spec.sameReplicaShape(spec.withBatching(spec.batching().withBatchInvariance(false))));
    }

    @Test
    void aRollingUpdateStartsAFractionOfTheReplicasAtATimeAndAtLeastOne() {
        assertEquals(1, spec.withNumReplicas(3).rollingUpdateBatch());
        assertEquals(2, spec.withNumReplicas(5).rollingUpdateBatch());
        assertEquals(1, spec.withNumReplicas(0).rollingUpdateBatch());
        assertEquals(4, spec.withNumReplicas(4).withRollout(new RolloutSpec(1, Duration.ZERO)).rollingUpdateBatch());
    }

    private static void assertRefused(String field, Supplier<?> build) {
        InvalidSpec e = assertThrows(InvalidSpec.class, build::get);
        assertEquals(field, e.field(), e.getMessage());
    }

    @Test
    void aMultiplexedDeploymentsGlobMatchesNamesAndADeploymentOfOneModelMatchesNone() {
        DeploymentSpec tenants = DeploymentSpec.defaults("tenants", "tenant-*").withMultiplex(MultiplexSpec.DEFAULTS);
        assertTrue(tenants.globMatches("tenant-a"));
        assertFalse(tenants.globMatches("tenants"));
        assertFalse(DeploymentSpec.defaults("plain", "encoder").globMatches("encoder"));
    }

    @Test
    void absentSectionsAreOffValuesThatEqualNoSetting() {
        assertEquals(AutoscalingSpec.OFF, spec.autoscaling());
        assertEquals(MultiplexSpec.OFF, spec.multiplex());
        assertFalse(spec.isAutoscaled());
        assertFalse(spec.isMultiplexed());
        assertFalse(AutoscalingSpec.OFF.equals(AutoscalingSpec.DEFAULTS));
        assertFalse(MultiplexSpec.OFF.equals(MultiplexSpec.DEFAULTS));
        assertThrows(IllegalArgumentException.class, () -> AutoscalingSpec.OFF.withMaxReplicas(3));
        assertFalse(DeploymentConfig.toMap(spec).containsKey("autoscaling"), "an off section is written absent");
        assertFalse(DeploymentConfig.toMap(spec).containsKey("max_models_per_replica"));
        assertTrue(DeploymentConfig.toMap(spec.withAutoscaling(AutoscalingSpec.DEFAULTS)).containsKey("autoscaling"));
    }

    @Test
    void turningAutoscalingOnAtItsDefaultsIsAChangeAndOffToOffIsNot() {
        DeploymentSpec on = spec.withAutoscaling(AutoscalingSpec.DEFAULTS);
        assertFalse(on.equals(spec));
        assertTrue(on.isAutoscaled());
        assertSame(spec, spec.withAutoscaling(AutoscalingSpec.OFF));
        assertEquals(spec, on.withAutoscaling(AutoscalingSpec.OFF));
        assertEquals(spec, on.withNumReplicas(1));
        assertEquals(AutoscalingSpec.OFF, on.withNumReplicas(3).autoscaling());
    }

    @Test
    void aGlobTakesTheMultiplexDefaultsAndAModelNameTurnsMultiplexingOff() {
        DeploymentSpec tenants = spec.withModel(ModelReference.named("t-*"));
        assertEquals(MultiplexSpec.DEFAULTS, tenants.multiplex());
        assertFalse(tenants.equals(spec));
        assertEquals(spec, tenants.withModel(ModelReference.named("m")));
        assertRefused("max_models_per_replica", () -> spec.withMultiplex(MultiplexSpec.DEFAULTS));
        assertRefused("model", () -> tenants.withMultiplex(MultiplexSpec.OFF));
    }
}
