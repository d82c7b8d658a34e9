package dev.serval.autoscaling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.spec.AutoscalingSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScalingPolicyTest {

    private static final long MS = 1_000_000L;
    private static final long PERIOD = 100 * MS;

    /** 1-10 replicas, target 2, upscale 3 s, downscale 10 s, to zero 20 s, look-back 1 s. */
    private static final AutoscalingSpec SPEC = AutoscalingSpec.DEFAULTS.withTiming(Duration.ofSeconds(3),
            Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(1));

    private final ScalingPolicy policy = new ScalingPolicy(new LoadWindow(11));
    private long now;
    private int current = 1;
    private final List<Long> changes = new ArrayList<>();

    /** Samples {@code ongoing} every period for {@code millis}, deciding and applying after each sample. */
    private ScalingPolicy.Step run(AutoscalingSpec spec, int ongoing, long millis) {
        ScalingPolicy.Step step = null;
        for (long t = 0; t < millis * MS; t += PERIOD) {
            now += PERIOD;
            policy.window().add(now, ongoing);
            step = policy.decide(spec, current, now);
            if (step.next() != current) {
                changes.add(now);
                current = step.next();
            }
        }
        return step;
    }

    @Test
    void wantsTheOngoingRequestsOverTheTargetRoundedUp() {
        assertEquals(1, ScalingPolicy.wanted(SPEC, 0.5, 1));
        assertEquals(2, ScalingPolicy.wanted(SPEC, 4, 1));
        assertEquals(3, ScalingPolicy.wanted(SPEC, 4.2, 1));
        assertEquals(10, ScalingPolicy.wanted(SPEC, 400, 1), "clamped to max_replicas");
        assertEquals(1, ScalingPolicy.wanted(SPEC, 0, 5), "clamped to min_replicas");
        assertEquals(0, ScalingPolicy.wanted(SPEC.withMinReplicas(0), 0, 1));
    }

    @Test
    void theFactorsCoverPartOfTheDistanceAndADownscaleAlwaysRemovesOne() {
        AutoscalingSpec half = SPEC.withFactors(0.5, 0.5);
        assertEquals(5, ScalingPolicy.wanted(half, 16, 2), "2 + 0.5 x (8 - 2)");
        assertEquals(6, ScalingPolicy.wanted(half, 4, 10), "10 - 0.5 x (10 - 2)");
        assertEquals(2, ScalingPolicy.wanted(SPEC.withFactors(1, 0.01), 2, 3), "at least one fewer");
        assertEquals(10, ScalingPolicy.wanted(SPEC.withFactors(10, 1), 6, 2), "an aggressive upscale, clamped");
    }

    @Test
    void scalesUpOnlyAfterUpscaleDelayOfConsistentDecisions() {
        run(SPEC, 1, 5_000);
        assertEquals(1, current);
        ScalingPolicy.Step waiting = run(SPEC, 8, 2_500);
        assertEquals(1, current, "2.5 s of a 3 s upscale_delay");
        assertEquals(4, waiting.wanted());
        assertTrue(waiting.reason().contains("wants 4 replicas"), waiting.reason());

        ScalingPolicy.Step step = run(SPEC, 8, 800); // the run began once the 1 s average passed 2 ongoing

        assertEquals(4, current);
        assertEquals(1, changes.size());
        assertTrue(step.reason().contains("8.00 ongoing requests on average"), step.reason());
    }

    @Test
    void aDecisionAgainstTheRunStartsTheDelayAgain() {
        run(SPEC, 8, 1_500);
        run(SPEC, 2, 1_100); // the 1 s look-back forgets the burst: 2 ongoing fit 1 replica
        run(SPEC, 8, 2_500);
        assertEquals(1, current, "the run of decisions to scale up began again after the lull");
        run(SPEC, 8, 800);
        assertEquals(4, current);
    }

    @Test
    void aSquareWaveShorterThanTheDelaysChangesNothing() {
        for (int i = 0; i < 50; i++) {
            run(SPEC, 12, 2_000);
            run(SPEC, 0, 2_000);
        }
        assertEquals(List.of(), changes);
    }

    @Test
    void changesAreAtLeastADelayApartWhateverTheLoad() {
        long seed = 42;
        for (int i = 0; i < 2_000; i++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            run(SPEC, (int) ((seed >>> 33) % 25), 100 + (seed >>> 60) * 100);
        }
        assertTrue(changes.size() > 2, "the random load moves the count: " + changes.size());
        for (int i = 1; i < changes.size(); i++) {
            assertTrue(changes.get(i) - changes.get(i - 1) >= 3_000 * MS,
                    "changes " + (i - 1) + " and " + i + " are " + (changes.get(i) - changes.get(i - 1)) / MS + " ms apart");
        }
    }

    @Test
    void scalesDownAfterDownscaleDelayThenToZeroAfterItsOwnDelay() {
        AutoscalingSpec toZero = SPEC.withMinReplicas(0);
        current = 3;
        run(toZero, 0, 9_900);
        assertEquals(3, current);
        run(toZero, 0, 200);
        assertEquals(1, current, "a downscale toward zero stops at one");
        run(toZero, 0, 19_800);
        assertEquals(1, current);
        ScalingPolicy.Step last = run(toZero, 0, 300);
        assertEquals(0, current);
        assertTrue(last.reason().contains("downscale_to_zero_delay 20.0s"), last.reason());
    }

    @Test
    void startsFromZeroAtOnceWhenARequestWaits() {
        AutoscalingSpec toZero = SPEC.withMinReplicas(0);
        current = 0;
        run(toZero, 0, 5_000);
        assertEquals(0, current);

        ScalingPolicy.Step step = run(toZero, 1, 100);

        assertEquals(1, current, "no upscale_delay from zero");
        assertTrue(step.reason().contains("arrived while scaled to zero"), step.reason());
        now += PERIOD;
        policy.window().add(now, 7);
        assertEquals(4, new ScalingPolicy(policy.window()).decide(toZero, 0, now).next(), "7 waiting, target 2");
    }

    @Test
    void averagesOverTheLookBackPeriod() {
        run(SPEC, 0, 900);
        ScalingPolicy.Step spike = run(SPEC, 40, 100);
        assertEquals(4.0, spike.ongoing(), 1e-9, "one sample of 40 among ten in the last second");
    }

    @Test
    void decidesNothingBeforeTheFirstSample() {
        ScalingPolicy.Step step = policy.decide(SPEC, 2, 0);
        assertEquals(2, step.next());
        assertTrue(Double.isNaN(step.ongoing()));
    }
}
