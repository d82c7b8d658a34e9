package dev.serval.autoscaling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.spec.AutoscalingSpec;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.DeploymentStatus;
import dev.serval.spec.MultiplexSpec;
import dev.serval.spec.PredictorSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AutoscalerTest {

    private long now;
    private final Autoscaler autoscaler = new Autoscaler(Duration.ofMillis(100), 4, () -> now,
            InstantSource.fixed(Instant.parse("2026-11-23T00:00:00Z")));

    /** A deployment whose controller applies a new count at once. */
    static class FakeTarget implements ScalingTarget {
        volatile DeploymentSpec spec;
        volatile int ongoing;
        volatile int desired;
        final List<Integer> scaled = new ArrayList<>();
        DeploymentStatus.Autoscaling status;
        int budgetRefusals;

        FakeTarget(DeploymentSpec spec) {
            this.spec = spec;
            this.desired = spec.numReplicas();
        }

        @Override
        public String name() {
            return spec.name();
        }

        @Override
        public DeploymentSpec spec() {
            return spec;
        }

        @Override
        public int ongoingRequests() {
            return ongoing;
        }

        @Override
        public int desiredReplicas() {
            return desired;
        }

        @Override
        public void scale(int replicas) {
            scaled.add(replicas);
            desired = replicas;
        }

        @Override
        public void autoscaled(DeploymentStatus.Autoscaling next, boolean changed, boolean budgetRefused) {
            status = next;
            budgetRefusals += budgetRefused ? 1 : 0;
        }
    }

    private static DeploymentSpec autoscaled(String name, int max, int threads) {
        return DeploymentSpec.defaults(name, "m").withPredictors(new PredictorSpec(threads, 1, false))
                .withAutoscaling(AutoscalingSpec.DEFAULTS.withMaxReplicas(max).withTiming(Duration.ofSeconds(1),
                        Duration.ofSeconds(5), null, Duration.ofMillis(500)));
    }

    private void ticks(int count) {
        for (int i = 0; i < count; i++) {
            now += 100_000_000L;
            autoscaler.tick();
        }
    }

    @Test
    void scalesAnAutoscaledDeploymentAndPublishesWhy() {
        FakeTarget target = new FakeTarget(autoscaled("a", 4, 1));
        autoscaler.register(target);
        target.ongoing = 6;

        ticks(5);
        assertEquals(List.of(), target.scaled, "within upscale_delay");
        assertEquals(3, target.status.wantedReplicas());
        ticks(7);

        assertEquals(List.of(3), target.scaled);
        DeploymentStatus.Autoscaling.Change change = target.status.lastChange();
        assertEquals(1, change.from());
        assertEquals(3, change.to());
        assertTrue(change.reason().contains("up from 1 to 3"), change.reason());
        assertEquals(Instant.parse("2026-11-23T00:00:00Z"), change.at());
    }

    /**
     * The controller applies a new count on its own thread, and whoever sees it applied (a scrape, the deployment API,
     * AutoscalingTest) must find the decision behind it already published: the decision first, then the count.
     */
    @Test
    void aDecisionIsPublishedBeforeTheControllerIsHandedItsCount() {
        List<String> published = new ArrayList<>();
        FakeTarget target = new FakeTarget(autoscaled("a", 4, 1)) {
            @Override
            public void scale(int replicas) {
                published.add("scale to " + replicas + " with the last change published then: "
                        + (status == null || status.lastChange() == null ? "none" : "to " + status.lastChange().to()));
                super.scale(replicas);
            }
        };
        autoscaler.register(target);
        target.ongoing = 6;

        ticks(12);

        assertEquals(List.of("scale to 3 with the last change published then: to 3"), published);
    }

    @Test
    void leavesFixedDeploymentsAloneButCountsTheirThreads() {
        FakeTarget fixed = new FakeTarget(DeploymentSpec.defaults("fixed", "m").withNumReplicas(1)
                .withPredictors(new PredictorSpec(2, 1, false)));
        FakeTarget scaled = new FakeTarget(autoscaled("a", 4, 1));
        autoscaler.register(fixed);
        autoscaler.register(scaled);
        scaled.ongoing = 8;

        ticks(20);

        assertEquals(List.of(), fixed.scaled);
        assertNull(fixed.status);
        assertEquals(List.of(2), scaled.scaled, "4 threads: 2 for the fixed replica, 2 for this one's");
        String reason = scaled.status.lastChange().reason();
        assertTrue(reason.contains("the CPU budget (serval.cpu-budget 4 threads, 1 per replica) grants 2"), reason);
        assertEquals(1, scaled.budgetRefusals);
    }

    /** A multiplexed replica runs up to max_models_per_replica models, each with its own predictor threads. */
    @Test
    void aMultiplexedReplicaCostsTheThreadsOfEveryModelItMayHold() {
        FakeTarget tenants = new FakeTarget(DeploymentSpec.defaults("tenants", "t-*")
                .withPredictors(new PredictorSpec(1, 1, false)).withMultiplex(new MultiplexSpec(2, 0))
                .withAutoscaling(AutoscalingSpec.DEFAULTS.withMaxReplicas(4).withTiming(Duration.ofSeconds(1),
                        Duration.ofSeconds(5), null, Duration.ofMillis(500))));
        autoscaler.register(tenants);
        tenants.ongoing = 8;

        ticks(20);

        assertEquals(List.of(2), tenants.scaled, "4 threads: 2 replicas of 2 models of 1 thread");
        String reason = tenants.status.lastChange().reason();
        assertTrue(reason.contains("the CPU budget (serval.cpu-budget 4 threads, 2 per replica) grants 2"), reason);
    }

    @Test
    void sharesTheBudgetBetweenDeploymentsInProportionToDemand() {
        FakeTarget a = new FakeTarget(autoscaled("a", 10, 1));
        FakeTarget b = new FakeTarget(autoscaled("b", 10, 1));
        autoscaler.register(a);
        autoscaler.register(b);
        a.ongoing = 20; // wants 10
        b.ongoing = 4; // wants 2

        ticks(12);

        assertEquals(4, a.desired + b.desired, "the budget of 4 threads is used, never exceeded");
        assertTrue(a.desired > b.desired, a.desired + " vs " + b.desired);
    }

    @Test
    void forgetsADeploymentOnceUnregisteredOrNoLongerAutoscaled() {
        FakeTarget target = new FakeTarget(autoscaled("a", 4, 1));
        autoscaler.register(target);
        target.ongoing = 8;
        ticks(3);
        target.spec = target.spec.withNumReplicas(1);
        ticks(20);
        assertEquals(List.of(), target.scaled);

        target.spec = autoscaled("a", 4, 1);
        autoscaler.unregister(target);
        ticks(20);
        assertEquals(List.of(), target.scaled);
    }

    @Test
    void aFailingTargetDoesNotStopTheAutoscaler() {
        FakeTarget broken = new FakeTarget(autoscaled("broken", 4, 1)) {
            @Override
            public int ongoingRequests() {
                throw new IllegalStateException("boom");
            }
        };
        autoscaler.register(broken);
        ticks(3);
        autoscaler.unregister(broken);
        FakeTarget target = new FakeTarget(autoscaled("a", 4, 1));
        autoscaler.register(target);
        target.ongoing = 8;
        ticks(12);
        assertFalse(target.scaled.isEmpty());
    }
}
