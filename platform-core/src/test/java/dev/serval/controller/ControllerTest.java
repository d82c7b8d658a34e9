package dev.serval.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.replica.ReplicaRecord;
import dev.serval.replica.ReplicaState;
import dev.serval.routing.RoutableReplica;
import dev.serval.routing.Router;
import dev.serval.routing.RoutingSnapshot;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.DeploymentStatus;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The controller with a fake launcher and a manual clock, driven on the test thread (reports run inline through
 * {@code Runnable::run}). After every test the invariants are checked.
 */
class ControllerTest {

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final Controller controller = new Controller(clock::get, Runnable::run);
    private final FakeLauncher launcher = new FakeLauncher();
    private final Router<String, String> router = new Router<>("d", 10, clock::get);
    private final AtomicReference<DeploymentStatus> status = new AtomicReference<>();
    private DeploymentSpec spec = DeploymentSpec.defaults("d", "fake:").withNumReplicas(3);

    private void apply(DeploymentSpec next) {
        spec = next;
        controller.apply(next, launcher, router, status::set);
        controller.tick();
    }

    /** Starts {@code n} replicas and reports each one started. */
    private void runningReplicas(int n) {
        apply(spec.withNumReplicas(n));
        for (ReplicaRecord record : List.copyOf(launcher.starts)) {
            launcher.start(record.id());
        }
        controller.tick();
    }

    private List<ReplicaRecord> replicas(ReplicaState state) {
        return controller.replicas("d").stream().filter(r -> r.state() == state).toList();
    }

    /**
     * A change of the replica count is in the status as soon as the controller applied it, before its next tick: the
     * management API answers a change with the status it caused, read right after the apply.
     */
    @Test
    void aChangedReplicaCountIsInTheStatusOnceApplied() {
        runningReplicas(1);
        controller.apply(spec.withNumReplicas(3), launcher, router, status::set);
        assertEquals(3, status.get().desired(), "desired right after the apply, without a tick");
        controller.tick();
        spec = spec.withNumReplicas(3);
    }

    @AfterEach
    void invariantsHold() {
        checkInvariants();
    }

    /** Routable set == RUNNING and UPDATING replicas; slots never negative; the status matches the records. */
    private void checkInvariants() {
        if (!controller.manages("d")) {
            assertTrue(router.snapshot().isEmpty(), "a removed deployment routes nowhere");
            return;
        }
        Set<Long> routable = router.snapshot().replicas().stream().map(RoutableReplica::id).collect(Collectors.toSet());
        Set<Long> expected = controller.replicas("d").stream().filter(r -> r.state().routable())
                .map(ReplicaRecord::id).collect(Collectors.toSet());
        assertEquals(expected, routable, "routable set == RUNNING + UPDATING replicas");
        for (RoutableReplica<String, String> replica : router.snapshot().replicas()) {
            assertTrue(replica.inFlight() >= 0);
        }
        DeploymentStatus now = status.get();
        assertEquals(replicas(ReplicaState.STARTING).size(), now.starting() + countOutdated(ReplicaState.STARTING));
        assertEquals(replicas(ReplicaState.RECOVERING).size(), now.recovering());
        assertEquals(replicas(ReplicaState.STOPPING).size(), now.stopping());
    }

    private int countOutdated(ReplicaState state) {
        return (int) controller.replicas("d").stream()
                .filter(r -> r.state() == state && !r.version().equals(spec.version())).count();
    }

    @Test
    void scalesUpByStartingReplicasAndRoutesThemOnceTheyRun() {
        apply(spec);
        assertEquals(3, launcher.starts.size());
        assertEquals(3, replicas(ReplicaState.STARTING).size());
        assertTrue(router.snapshot().isEmpty(), "nothing is routable before a replica runs");

        launcher.start(0);
        launcher.start(1);
        controller.tick();

        assertEquals(2, router.snapshot().size());
        assertEquals(2, status.get().running());
        assertEquals(1, status.get().starting());
        checkInvariants();
    }

    @Test
    void aTickWithNothingToDoIsDetectedByReferenceAndPublishesNothing() {
        runningReplicas(3);
        RoutingSnapshot<String, String> snapshot = router.snapshot();
        DeploymentStatus published = status.get();
        List<ReplicaRecord> records = controller.replicas("d");

        assertSame(ReconcilePlan.noChange(), controller.reconcile("d"));
        controller.tick();
        controller.tick();

        assertSame(snapshot, router.snapshot(), "no new snapshot");
        assertSame(published, status.get(), "no new status");
        List<ReplicaRecord> after = controller.replicas("d");
        for (int i = 0; i < records.size(); i++) {
            assertSame(records.get(i), after.get(i), "records are not rebuilt");
        }
    }

    @Test
    void reapplyingTheSameSpecPlansNothing() {
        runningReplicas(3);
        RoutingSnapshot<String, String> snapshot = router.snapshot();
        controller.apply(spec, launcher, router, status::set);

        assertSame(ReconcilePlan.noChange(), controller.reconcile("d"));
        controller.tick();
        assertSame(snapshot, router.snapshot());
        assertEquals(3, launcher.starts.size());
    }

    @Test
    void scalingDownStopsExactlyTheExtraReplicasAndTouchesNoOther() {
        runningReplicas(10);
        List<ReplicaRecord> before = controller.replicas("d");

        ReconcilePlan plan;
        spec = spec.withNumReplicas(7);
        controller.apply(spec, launcher, router, status::set);
        plan = controller.reconcile("d");
        assertEquals(3, plan.stop().size());
        assertEquals(0, plan.start());
        controller.tick();

        assertEquals(3, launcher.stops.size());
        assertEquals(Duration.ofSeconds(10), launcher.drains.getFirst(), "stopping replicas drain for the spec's timeout");
        assertEquals(7, router.snapshot().size(), "stopping replicas receive no new requests");
        Set<Long> stopped = launcher.stops.stream().map(ReplicaRecord::id).collect(Collectors.toSet());
        for (ReplicaRecord record : before) {
            if (!stopped.contains(record.id())) {
                assertTrue(controller.replicas("d").contains(record), "untouched: " + record);
                assertTrue(controller.replicas("d").stream().anyMatch(r -> r == record), "same instance: " + record);
            }
        }
        checkInvariants();
        for (long id : stopped) {
            launcher.stopped(id);
        }
        controller.tick();
        assertEquals(7, controller.replicas("d").size());
    }

    @Test
    void anUnhealthyReplicaGoesRecoveringAndIsReplaced() {
        runningReplicas(2);
        RoutingSnapshot<String, String> before = router.snapshot();

        launcher.fail(0, "health check failed 3 times");

        ReplicaRecord recovering = replicas(ReplicaState.RECOVERING).getFirst();
        assertEquals(0, recovering.id());
        assertEquals(1, recovering.failures());
        assertEquals("health check failed 3 times", status.get().lastError());
        assertNotSame(before, router.snapshot(), "the failed replica left the routable set at once");
        assertEquals(1, router.snapshot().size());
        assertEquals(Duration.ofSeconds(10), launcher.drains.getLast(), "what it admitted may still finish");
        checkInvariants();

        controller.tick();
        assertEquals(3, launcher.starts.size(), "a replacement starts");
        launcher.start(2);
        launcher.stopped(0);
        controller.tick();
        assertEquals(2, router.snapshot().size());
        assertTrue(replicas(ReplicaState.RECOVERING).isEmpty());
    }

    @Test
    void failedStartsAreRetriedWithGrowingBackOff() {
        apply(spec.withNumReplicas(1));
        launcher.fail(0, "model file missing");
        launcher.stopped(0);
        controller.tick();
        assertEquals(1, launcher.starts.size(), "no retry before the back-off");

        clock.addAndGet(Duration.ofMillis(999).toNanos());
        controller.tick();
        assertEquals(1, launcher.starts.size());
        clock.addAndGet(Duration.ofMillis(1).toNanos());
        controller.tick();
        assertEquals(2, launcher.starts.size(), "retried after 1 s");

        launcher.fail(1, "model file missing");
        launcher.stopped(1);
        clock.addAndGet(Duration.ofMillis(1500).toNanos());
        controller.tick();
        assertEquals(2, launcher.starts.size(), "the second back-off is 2 s");
        clock.addAndGet(Duration.ofMillis(500).toNanos());
        controller.tick();
        assertEquals(3, launcher.starts.size());

        launcher.start(2);
        controller.tick();
        assertEquals(0, status.get().failedStarts(), "a successful start ends the failure streak");
        assertEquals("model file missing", status.get().lastError(), "the last error stays visible");
    }

    @Test
    void aNewVersionRollsOverWithoutEverRoutingToFewerReplicasThanDesired() {
        runningReplicas(2);
        apply(spec.withRollout(spec.rollout().withRollingUpdateFraction(1.0)).withVersion("2"));

        assertEquals(2, replicas(ReplicaState.UPDATING).size(), "old replicas keep serving as UPDATING");
        assertEquals(2, router.snapshot().size());
        List<ReplicaRecord> newOnes = launcher.starts.subList(2, 4);
        assertTrue(newOnes.stream().allMatch(r -> r.version().equals("2")));
        checkInvariants();

        launcher.start(newOnes.get(0).id());
        controller.tick();
        assertEquals(1, launcher.stops.size(), "one old replica stops once one new one runs");
        assertEquals("1", launcher.stops.getFirst().version());
        assertEquals(2, router.snapshot().size());
        checkInvariants();

        launcher.start(newOnes.get(1).id());
        controller.tick();
        assertEquals(2, launcher.stops.size());
        assertEquals(2, router.snapshot().size());
        assertTrue(router.snapshot().replicas().stream().allMatch(r -> r.id() >= 2), "only new replicas route");
        launcher.stopped(0);
        launcher.stopped(1);
        controller.tick();
        assertEquals(2, controller.replicas("d").size());
    }

    @Test
    void stoppingAReplicaThatIsStillStartingNeverRoutesIt() {
        apply(spec.withNumReplicas(2));
        apply(spec.withNumReplicas(1));
        assertEquals(1, launcher.stops.size());
        long stoppedId = launcher.stops.getFirst().id();

        launcher.start(stoppedId); // its start finishes after the stop was asked for
        controller.tick();

        assertTrue(router.snapshot().isEmpty());
        launcher.stopped(stoppedId);
        controller.tick();
        assertEquals(1, controller.replicas("d").size());
    }

    @Test
    void removingADeploymentStopsEveryReplicaThenForgetsIt() {
        runningReplicas(2);
        AtomicBoolean removed = new AtomicBoolean();

        controller.remove("d", () -> removed.set(true));
        controller.tick();

        assertEquals(2, launcher.stops.size());
        assertTrue(router.snapshot().isEmpty());
        assertFalse(removed.get());
        launcher.stopped(0);
        launcher.stopped(1);
        controller.tick();
        assertTrue(removed.get());
        assertFalse(controller.manages("d"));
    }

    @Test
    void aRollingUpdateReplacesAFractionOfTheReplicasAtATime() {
        runningReplicas(4);
        apply(spec.withRollout(spec.rollout().withRollingUpdateFraction(0.5)).withVersion("2"));

        for (int round = 0; round < 2; round++) {
            List<ReplicaRecord> fresh = launcher.starts.subList(4 + 2 * round, launcher.starts.size());
            assertEquals(2, fresh.size(), "half of 4 replicas start at a time (round " + round + ")");
            assertEquals(4, router.snapshot().size(), "old replicas serve while new ones start");
            for (ReplicaRecord record : List.copyOf(fresh)) {
                launcher.start(record.id());
            }
            controller.tick();
            assertEquals(2 * (round + 1), launcher.stops.size(), "as many old replicas stop as new ones run");
            assertEquals(4, router.snapshot().size());
            checkInvariants();
        }
        assertEquals(8, launcher.starts.size());
        assertTrue(router.snapshot().replicas().stream().allMatch(r -> r.id() >= 4), "only version 2 routes");
        assertTrue(launcher.stops.stream().allMatch(r -> r.version().equals("1")));
        for (ReplicaRecord stopped : List.copyOf(launcher.stops)) {
            launcher.stopped(stopped.id());
        }
        controller.tick();
        assertEquals(4, controller.replicas("d").size());
    }

    @Test
    void appliesTheAutoscalersCountWithinTheSpecsBoundsAndIgnoresItForAFixedSpec() {
        runningReplicas(2);
        controller.scale("d", 5);
        assertEquals(2, status.get().desired(), "a fixed deployment keeps num_replicas");

        apply(spec.withAutoscaling(dev.serval.spec.AutoscalingSpec.DEFAULTS.withMaxReplicas(4)));
        assertEquals(2, status.get().desired(), "turning autoscaling on keeps the count it runs");
        assertTrue(status.get().autoscaled());
        controller.scale("d", 9);
        controller.tick();

        assertEquals(4, status.get().desired(), "clamped to max_replicas");
        assertEquals(4, launcher.starts.size());
        apply(spec.withAutoscaling(spec.autoscaling().withMaxReplicas(3)));
        assertEquals(3, status.get().desired(), "a new bound clamps the count");
        assertEquals(1, replicas(ReplicaState.STOPPING).size(), "one replica stops");
    }

    @Test
    void aNewAutoscaledDeploymentStartsAtItsInitialCountAndCanGoToZero() {
        apply(DeploymentSpec.defaults("d", "fake:").withAutoscaling(dev.serval.spec.AutoscalingSpec.DEFAULTS
                .withMinReplicas(0).withInitialReplicas(2)));
        assertEquals(2, launcher.starts.size());
        for (ReplicaRecord record : List.copyOf(launcher.starts)) {
            launcher.start(record.id());
        }
        controller.tick();

        controller.scale("d", 0);
        controller.tick();
        for (ReplicaRecord record : replicas(ReplicaState.STOPPING)) {
            launcher.stopped(record.id());
        }
        controller.tick();

        assertTrue(status.get().idle(), status.get().toString());
        assertEquals(DeploymentState.IDLE, DeploymentState.of(false, router.snapshot().size(), status.get(), false));
    }
}
