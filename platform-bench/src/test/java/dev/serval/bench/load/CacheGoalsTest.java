package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CacheGoalsTest {

    private static final CacheGoals.Pair SINGLE = new CacheGoals.Pair(900, 300);
    private static final CacheGoals.Pair CPU = new CacheGoals.Pair(800, 2400);

    private static CacheGoals.Round round(double zipfOn, double zipfOff, double uniqueOn, double uniqueOff,
            double cachedP50, double noopP50) {
        return new CacheGoals.Round(new CacheGoals.Pair(zipfOn, zipfOff), new CacheGoals.Pair(uniqueOn, uniqueOff),
                SINGLE, SINGLE, CPU, CPU, cachedP50, noopP50, 0, 0);
    }

    private static Goals.Goal find(List<Goals.Goal> goals, String workload, String figureStart) {
        return goals.stream().filter(g -> g.workload().equals(workload) && g.figure().startsWith(figureStart))
                .findFirst().orElseThrow();
    }

    @Test
    void aCacheThatTriplesZipfKeepsUniqueAndAnswersLikeTheNoopMeetsEveryGoal() {
        List<Goals.Goal> goals = CacheGoals.evaluate(List.of(round(2400, 800, 790, 800, 0.140, 0.100)), 64);

        Goals.Goal zipf = find(goals, "zipf", "req/s at saturation");
        assertEquals(3.0, zipf.value(), 1e-9); // exactly 3 x is enough
        assertTrue(zipf.met());
        assertTrue(zipf.figure().contains("64 connections"), zipf.figure());
        assertEquals(0.9875, find(goals, "unique", "req/s at saturation").value(), 1e-9);
        Goals.Goal cached = find(goals, "cached", "p50");
        assertEquals(0.04, cached.value(), 1e-9);
        assertTrue(cached.met());
        assertTrue(CacheGoals.allMet(goals));
    }

    @Test
    void eachGoalFailsOnItsOwn() {
        List<Goals.Goal> slowZipf = CacheGoals.evaluate(List.of(round(2300, 800, 800, 800, 0.1, 0.1)), 64);
        List<Goals.Goal> slowUnique = CacheGoals.evaluate(List.of(round(2400, 800, 780, 800, 0.1, 0.1)), 64);
        List<Goals.Goal> slowHit = CacheGoals.evaluate(List.of(round(2400, 800, 800, 800, 0.151, 0.1)), 64);

        assertFalse(find(slowZipf, "zipf", "req/s at saturation").met());
        assertTrue(find(slowZipf, "unique", "req/s at saturation").met());
        assertFalse(find(slowUnique, "unique", "req/s at saturation").met()); // 0.975
        assertFalse(find(slowHit, "cached", "p50").met()); // 0.051 ms over the no-op
        assertFalse(CacheGoals.allMet(slowZipf));
        assertFalse(CacheGoals.allMet(slowUnique));
        assertFalse(CacheGoals.allMet(slowHit));
    }

    @Test
    void theGoalHoldsTheMedianOfTheRoundsRatiosNotTheRatioOfTheirSums() {
        // Round 2 ran slower on both servers (the machine was busy): its ratio is as good as round 1's.
        List<CacheGoals.Round> rounds = List.of(round(3200, 800, 800, 800, 0.12, 0.1),
                round(1600, 400, 400, 400, 0.30, 0.1), round(2000, 800, 790, 800, 0.13, 0.1));

        List<Goals.Goal> goals = CacheGoals.evaluate(rounds, 64);

        Goals.Goal zipf = find(goals, "zipf", "req/s at saturation");
        assertEquals(4.0, zipf.value(), 1e-9); // ratios 4, 4, 2.5
        assertEquals(2000, zipf.serval(), 1e-9);
        assertEquals(800, zipf.limit(), 1e-9);
        assertEquals(0.03, find(goals, "cached", "p50").value(), 1e-9); // 0.02, 0.20, 0.03: one bad round
        assertEquals(1.25, CacheGoals.median(List.of(round(1, 1, 1, 1, 1, 0), round(1, 1, 1, 1, 0.5, 0),
                round(1, 1, 1, 1, 1.5, 0), round(1, 1, 1, 1, 2, 0)), CacheGoals.Round::cachedP50), 1e-9);
    }

    @Test
    void singleConnectionRatiosAndCpuPerRequestAreReportedWithoutAGoal() {
        List<Goals.Goal> goals = CacheGoals.evaluate(List.of(round(2400, 800, 800, 800, 0.1, 0.1)), 64);

        Goals.Goal cpu = find(goals, "zipf", "server CPU");
        assertEquals(1 / 3.0, cpu.value(), 1e-9); // a third of the CPU per request with the cache on
        assertNull(cpu.met());
        Goals.Goal single = find(goals, "zipf", "req/s at 1 connection");
        assertEquals(3.0, single.value(), 1e-9);
        assertNull(single.met());
        assertEquals("", single.goal());
        assertTrue(CacheGoals.allMet(goals), "rows without a goal do not count");
    }

    @Test
    void aMissingRunIsNoVerdictAndNoVerdictIsNotAllMet() {
        List<Goals.Goal> goals = CacheGoals.evaluate(List.of(round(2400, Double.NaN, 800, 800, Double.NaN, 0.1)), 64);

        assertNull(find(goals, "zipf", "req/s at saturation").met());
        assertNull(find(goals, "cached", "p50").met());
        assertTrue(find(goals, "unique", "req/s at saturation").met());
        assertFalse(CacheGoals.allMet(goals));
    }

    @Test
    void aUniqueRunThatFoundCachedTextsOrACachedRunThatMissedFailsItsCheck() {
        CacheGoals.Pair pair = new CacheGoals.Pair(800, 800);
        List<Goals.Goal> goals = CacheGoals.evaluate(List.of(
                new CacheGoals.Round(new CacheGoals.Pair(2400, 800), pair, pair, pair, CPU, CPU, 0.1, 0.1, 12, 0),
                new CacheGoals.Round(new CacheGoals.Pair(2400, 800), pair, pair, pair, CPU, CPU, 0.1, 0.1, 3, 2)), 64);

        Goals.Goal found = find(goals, "unique", "texts found in the cache");
        assertEquals(15, found.value(), 1e-9);
        assertFalse(found.met());
        Goals.Goal missed = find(goals, "cached", "cache misses");
        assertEquals(2, missed.value(), 1e-9);
        assertFalse(missed.met());
        assertFalse(CacheGoals.allMet(goals));
    }

    @Test
    void anUnknownCountIsNoVerdict() {
        CacheGoals.Pair pair = new CacheGoals.Pair(800, 800);
        List<Goals.Goal> goals = CacheGoals.evaluate(List.of(
                new CacheGoals.Round(new CacheGoals.Pair(2400, 800), pair, pair, pair, CPU, CPU, 0.1, 0.1, -1, 0)), 64);

        assertNull(find(goals, "unique", "texts found in the cache").met());
        assertTrue(find(goals, "cached", "cache misses").met());
    }
}
