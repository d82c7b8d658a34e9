package dev.serval.autoscaling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * How many replicas each autoscaled deployment may add when the pod's cores are short: a pure function. A replica
 * costs its {@code predictor_threads × intra_op_threads} threads; the budget ({@code serval.cpu-budget}, default the
 * available processors) bounds the threads of every replica the deployments run. What is kept is never taken:
 * fixed deployments' replicas and each autoscaled deployment's current count (a deployment shrinks only by its own
 * downscale decisions, so no deployment's count jumps because another's load moved). What is left is the headroom
 * for upscales; each deployment's {@code min_replicas} is granted even past it, and so is the first replica of a
 * deployment at zero (requests are waiting for it: refusing it would leave them to time out); when the upscales want more than the
 * headroom, it goes to them in proportion to the threads each wants (then whole replicas left over to the most
 * short-changed), so the sum of threads never exceeds the budget through an upscale.
 */
final class CpuBudget {

    private CpuBudget() {
    }

    /**
     * One deployment's upscale claim.
     *
     * @param cost    threads per replica
     * @param current replicas it runs now (its controller's desired count)
     * @param min     its {@code min_replicas}: granted whatever the budget (as is one replica from zero)
     * @param wants   replicas its policy decided on: above {@code current} for an upscale
     */
    record Claim(int cost, int current, int min, int wants) {

        Claim {
            if (cost < 1 || current < 0 || min < 0 || wants < 0) {
                throw new IllegalArgumentException("cost must be >= 1 and counts >= 0: " + cost + ", " + current
                        + ", " + min + ", " + wants);
            }
        }

        /** What is granted whatever the budget: the current count, the minimum, and a first replica from zero. */
        int kept() {
            int floor = Math.max(Math.min(min, wants), current == 0 && wants > 0 ? 1 : 0);
            return Math.max(current, floor);
        }
    }

    /**
     * The replicas each claim may run, in the claims' order: {@code wants} for a claim that does not grow or when
     * everything fits, less for an upscale when the budget is short (never less than its current count or its
     * minimum).
     *
     * @param budget   threads the pod may run
     * @param reserved threads of replicas the autoscaler does not move (fixed deployments)
     */
    static int[] grant(int budget, long reserved, List<Claim> claims) {
        int[] granted = new int[claims.size()];
        long used = reserved;
        long wanted = 0;
        for (int i = 0; i < granted.length; i++) {
            Claim claim = claims.get(i);
            granted[i] = claim.wants() > claim.current() ? claim.kept() : claim.wants();
            used += (long) claim.cost() * Math.max(claim.current(), granted[i]);
            wanted += (long) claim.cost() * (claim.wants() - granted[i]);
        }
        long headroom = budget - used;
        if (wanted <= headroom) {
            for (int i = 0; i < granted.length; i++) {
                granted[i] = claims.get(i).wants();
            }
            return granted;
        }
        if (headroom <= 0) {
            return granted;
        }
        long left = headroom;
        for (int i = 0; i < granted.length; i++) {
            Claim claim = claims.get(i);
            long extra = (long) claim.cost() * (claim.wants() - granted[i]);
            int share = (int) ((double) headroom * extra / wanted / claim.cost());
            granted[i] += share;
            left -= (long) share * claim.cost();
        }
        List<Integer> shortest = new ArrayList<>();
        for (int i = 0; i < granted.length; i++) {
            if (granted[i] < claims.get(i).wants()) {
                shortest.add(i);
            }
        }
        shortest.sort(Comparator.comparingInt((Integer i) -> claims.get(i).wants() - granted[i]).reversed());
        for (int i : shortest) {
            if (claims.get(i).cost() <= left) {
                granted[i]++;
                left -= claims.get(i).cost();
            }
        }
        return granted;
    }
}
