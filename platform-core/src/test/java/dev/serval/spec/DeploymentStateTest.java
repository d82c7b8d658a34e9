package dev.serval.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DeploymentStateTest {

    private static DeploymentStatus status(int starting, int failedStarts) {
        return new DeploymentStatus("d", "1", 1, starting, 0, 0, 0, 0, failedStarts, failedStarts > 0 ? "boom" : null, false);
    }

    @Test
    void aClosedDeploymentIsStoppedWhateverItsReplicas() {
        assertEquals(DeploymentState.STOPPED, DeploymentState.of(true, 3, status(0, 0)));
    }

    @Test
    void anyRoutableReplicaMakesItReady() {
        assertEquals(DeploymentState.READY, DeploymentState.of(false, 1, status(0, 2)));
    }

    @Test
    void failedStartsWithNothingStartingMakeItFailedAndAStartingReplicaKeepsItLoading() {
        assertEquals(DeploymentState.FAILED, DeploymentState.of(false, 0, status(0, 1)));
        assertEquals(DeploymentState.LOADING, DeploymentState.of(false, 0, status(1, 1)));
        assertEquals(DeploymentState.LOADING, DeploymentState.of(false, 0, DeploymentStatus.initial("d", "1", 1, false)));
    }
}
