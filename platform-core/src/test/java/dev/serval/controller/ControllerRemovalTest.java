package dev.serval.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.replica.ReplicaRecord;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A deployment removed while its replicas are still starting or draining, and a new one created under its name
 * before they stopped. Driven on the test thread like {@link ControllerTest}.
 */
class ControllerRemovalTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final Controller controller = new Controller(clock::get, Runnable::run);
    private final DeploymentSpec spec = DeploymentSpec.defaults("d", "fake:");

    @Test
    void aNameBeingRemovedCanBeCreatedAgainAtOnceAndTheOldReplicasStillStopOnTheirOwn() {
        FakeLauncher oldLauncher = new FakeLauncher();
        Router<String, String> oldRouter = new Router<>("d", 10, clock::get);
        AtomicReference<DeploymentStatus> oldStatus = new AtomicReference<>();
        controller.apply(spec, oldLauncher, oldRouter, oldStatus::set);
        controller.tick();
        AtomicBoolean removed = new AtomicBoolean();
        controller.remove("d", () -> removed.set(true));
        controller.tick();
        assertEquals(List.of(0L), oldLauncher.stops.stream().map(ReplicaRecord::id).toList(),
                "the replica still loading its model is asked to stop, and has not stopped yet");

        FakeLauncher newLauncher = new FakeLauncher();
        Router<String, String> newRouter = new Router<>("d", 10, clock::get);
        AtomicReference<DeploymentStatus> newStatus = new AtomicReference<>();
        controller.apply(spec.withVersion("2"), newLauncher, newRouter, newStatus::set);
        controller.tick();

        assertEquals(List.of(1L), newLauncher.starts.stream().map(ReplicaRecord::id).toList(),
                "the new deployment starts its own replica, with an id the old one never used");
        newLauncher.start(1);
        assertEquals(List.of(1L), newRouter.snapshot().replicas().stream().map(RoutableReplica::id).toList());
        assertEquals(1, newStatus.get().running());
        assertEquals("2", newStatus.get().version());

        oldLauncher.stopped(0);
        controller.tick();
        assertTrue(removed.get(), "the old deployment was forgotten once its replica stopped");
        assertThrows(NotReady.class, () -> oldRouter.submit(List.of("x")), "the old router is closed");
        assertTrue(controller.manages("d"), "the name belongs to the new deployment");
        assertEquals(List.of(1L), controller.replicas("d").stream().map(ReplicaRecord::id).toList());
        assertEquals(1, newRouter.routableReplicas(), "the new deployment still serves");
    }

    @Test
    void aLateReportOfTheOldDeploymentNeverReachesTheNewOneUnderItsName() {
        FakeLauncher oldLauncher = new FakeLauncher();
        controller.apply(spec, oldLauncher, new Router<>("d", 10, clock::get), status -> { });
        controller.tick();
        controller.remove("d", () -> { });
        controller.tick();
        FakeLauncher newLauncher = new FakeLauncher();
        Router<String, String> newRouter = new Router<>("d", 10, clock::get);
        controller.apply(spec, newLauncher, newRouter, status -> { });
        controller.tick();

        oldLauncher.start(0); // the old replica's start finishes after all: the launcher stops it, nobody routes it

        assertTrue(newRouter.snapshot().isEmpty(), "the old replica is not routed by the new deployment");
        assertFalse(controller.replicas("d").stream().anyMatch(record -> record.id() == 0));
        newLauncher.start(1);
        assertEquals(List.of(1L), newRouter.snapshot().replicas().stream().map(RoutableReplica::id).toList());
    }
}
