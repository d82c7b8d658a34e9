package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DeploymentStateTest {

    private static DeploymentStatus status(int starting, int failedStarts) {
        return new DeploymentStatus("d", "1", 1, starting, 0, 0, 0, 0, failedStarts, failedStarts > 0 ? "boom" : null, false);
    }

    @Test
    void aClosedDeploymentIsStoppedWhateverItsReplicas() {
        assertEquals(DeploymentState.STOPPED, DeploymentState.of(true, 3, status(0, 0), false));
    }

    @Test
    void anyRoutableReplicaMakesItReady() {
        assertEquals(DeploymentState.READY, DeploymentState.of(false, 1, status(0, 2), false));
    }

    @Test
    void failedStartsWithNothingStartingMakeItFailedAndAStartingReplicaKeepsItLoading() {
        assertEquals(DeploymentState.FAILED, DeploymentState.of(false, 0, status(0, 1), false));
        assertEquals(DeploymentState.LOADING, DeploymentState.of(false, 0, status(1, 1), false));
        assertEquals(DeploymentState.LOADING, DeploymentState.of(false, 0, DeploymentStatus.initial("d", "1", 1, false),
                false));
    }

    @Test
    void aFixedDeploymentAskedForNoReplicaIsParkedAndAnAutoscaledOneAtZeroIdle() {
        DeploymentStatus none = DeploymentStatus.initial("d", "1", 0, false);
        assertEquals(DeploymentState.PARKED, DeploymentState.of(false, 0, none, false));
        DeploymentStatus draining = new DeploymentStatus("d", "1", 0, 0, 0, 0, 2, 0, 0, null, false);
        assertEquals(DeploymentState.PARKED, DeploymentState.of(false, 0, draining, false), "scaled down, draining");
        assertEquals(DeploymentState.IDLE, DeploymentState.of(false, 0, DeploymentStatus.initial("d", "1", 0, true),
                false));
        assertEquals(DeploymentState.STOPPED, DeploymentState.of(true, 0, none, false));
        assertEquals(DeploymentState.LOADING, DeploymentState.of(false, 0, none, true),
                "loaded on demand: at zero it waits for a request");
    }

    @Test
    void readyNeedsItsMinReadyReplicasRoutableAndAnAutoscaledOneAtLeastOneOfThoseItKeeps() {
        DeploymentSpec two = DeploymentSpec.defaults("d", "m").withHealth(HealthSpec.DEFAULTS.withMinReadyReplicas(2));
        assertFalse(DeploymentState.READY.ready(two, 1));
        assertTrue(DeploymentState.READY.ready(two, 2));
        assertFalse(DeploymentState.LOADING.ready(two, 2));
        DeploymentSpec toZero = two.withAutoscaling(AutoscalingSpec.DEFAULTS.withMinReplicas(0));
        assertFalse(DeploymentState.READY.ready(toZero, 0), "an autoscaled deployment at zero is not ready");
        assertTrue(DeploymentState.READY.ready(toZero, 1), "min_ready_replicas up to min_replicas, at least one");
    }

    @Test
    void theServerStaysReadyForADeploymentThatNeedsNoReplicaOrWakesFromZero() {
        DeploymentSpec parked = DeploymentSpec.defaults("d", "m").withNumReplicas(0)
                .withHealth(HealthSpec.DEFAULTS.withMinReadyReplicas(0));
        assertTrue(DeploymentState.LOADING.readyForServer(parked, 0));
        DeploymentSpec toZero = DeploymentSpec.defaults("d", "m")
                .withAutoscaling(AutoscalingSpec.DEFAULTS.withMinReplicas(0));
        assertTrue(DeploymentState.IDLE.readyForServer(toZero, 0));
        assertTrue(DeploymentState.LOADING.readyForServer(toZero, 0));
        assertFalse(DeploymentState.FAILED.readyForServer(toZero, 0));
        assertFalse(DeploymentState.LOADING.readyForServer(DeploymentSpec.defaults("d", "m"), 0));
    }
}
