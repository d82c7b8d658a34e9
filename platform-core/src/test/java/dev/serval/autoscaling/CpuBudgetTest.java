package dev.serval.autoscaling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.autoscaling.CpuBudget.Claim;
import java.util.List;
import org.junit.jupiter.api.Test;

class CpuBudgetTest {

    @Test
    void grantsEveryUpscaleThatFits() {
        assertArrayEquals(new int[] {3, 2}, CpuBudget.grant(9, 2, List.of(new Claim(1, 1, 1, 3), new Claim(2, 1, 1, 2))));
        assertArrayEquals(new int[] {3, 1}, CpuBudget.grant(8, 2, List.of(new Claim(1, 1, 1, 3), new Claim(2, 1, 1, 2))),
                "one thread short: the 3 threads left go where whole replicas fit");
    }

    @Test
    void sharesTheHeadroomInProportionToWhatEachWants() {
        // budget 8, fixed replicas hold 2, each runs 1 replica of 1 thread: 4 threads left; they want 6 and 2 more.
        int[] granted = CpuBudget.grant(8, 2, List.of(new Claim(1, 1, 1, 7), new Claim(1, 1, 1, 3)));
        assertArrayEquals(new int[] {4, 2}, granted);
    }

    @Test
    void neverGrantsAnUpscalePastTheBudget() {
        long seed = 7;
        for (int round = 0; round < 10_000; round++) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            int budget = 1 + (int) ((seed >>> 40) % 32);
            int a = (int) ((seed >>> 20) % 4);
            int b = (int) ((seed >>> 10) % 4);
            List<Claim> claims = List.of(new Claim(1 + (int) (seed >>> 62), a, 0, a + (int) ((seed >>> 30) % 9)),
                    new Claim(2, b, 0, b + (int) ((seed >>> 50) % 9)));
            int[] granted = CpuBudget.grant(budget, 0, claims);
            long used = 0;
            long before = 0;
            for (int i = 0; i < granted.length; i++) {
                Claim claim = claims.get(i);
                assertTrue(granted[i] >= claim.current() && granted[i] <= claim.wants(), "round " + round);
                if (claim.current() == 0 && claim.wants() > 0) {
                    before += claim.cost(); // a first replica from zero is granted past the budget
                }
                used += (long) claim.cost() * granted[i];
                before += (long) claim.cost() * claim.current();
            }
            assertTrue(used <= Math.max(budget, before), "round " + round + ": " + used + " threads of " + budget);
        }
    }

    @Test
    void grantsMinReplicasWhateverTheBudget() {
        assertArrayEquals(new int[] {2}, CpuBudget.grant(1, 4, List.of(new Claim(1, 0, 2, 5))));
    }

    @Test
    void grantsAFirstReplicaFromZeroWhateverTheBudget() {
        assertArrayEquals(new int[] {1}, CpuBudget.grant(2, 2, List.of(new Claim(1, 0, 0, 3))),
                "requests wait for it; more than one waits for room");
    }

    @Test
    void leavesDownscalesAndHoldsAlone() {
        assertArrayEquals(new int[] {1, 3}, CpuBudget.grant(1, 10, List.of(new Claim(1, 4, 1, 1), new Claim(1, 3, 1, 3))));
    }
}
