package dev.serval.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.Test;

/**
 * How the measured costs choose a batch size, from plain numbers: a scripted cost per text for each size stands for
 * the model, each take under backlog runs at the size the costs aim at and is recorded; no threads, no clock.
 */
class BatchCostsTest {

    /** A fair share that never limits the take: a deep backlog. */
    private static final int BACKLOG = 1_000;

    /**
     * {@code takes} takes under a deep backlog: each aims at {@link BatchCosts#target}, takes that many, and records
     * what {@code nanosPerText} says the batch cost (every text 10 units long). Returns the sizes taken.
     */
    private static List<Integer> serve(BatchCosts costs, int takes, IntToDoubleFunction nanosPerText) {
        List<Integer> sizes = new ArrayList<>();
        for (int i = 0; i < takes; i++) {
            int size = Math.min(BACKLOG, costs.target(BACKLOG));
            sizes.add(size);
            costs.record(size, 10L * size, Math.round(size * nanosPerText.applyAsDouble(size)));
        }
        return sizes;
    }

    /** The fp32 MiniLM's shape on an AVX2 machine: dearer alone, cheapest around 16, dearer again at 32. */
    private static double valley(int size) {
        return size == 1 ? 5_000 : size < 4 ? 4_800 : size < 8 ? 4_500 : size < 16 ? 4_200 : size < 32 ? 3_900 : 4_300;
    }

    @Test
    void underABacklogTheSizeConvergesOnTheCheapestCostPerText() {
        BatchCosts costs = new BatchCosts(32, 32); // the probe found that batching pays: start at the bound

        List<Integer> sizes = serve(costs, 2_000, BatchCostsTest::valley);

        assertEquals(31, costs.chosen(), "the class 16-31 costs least per text");
        List<Integer> late = sizes.subList(1_000, 2_000);
        long atChosen = late.stream().filter(size -> size == 31).count();
        assertTrue(atChosen >= 1_000 - 1_000 / BatchCosts.EXPLORE_EVERY - 1, "only explorations leave it: " + atChosen);
        assertTrue(late.stream().allMatch(size -> size <= 32), "never past max_batch_size");
    }

    @Test
    void aSizeAfterWhichBatchingStopsPayingIsFoundFromBelow() {
        BatchCosts costs = new BatchCosts(32, 1); // the probe found that batching does not pay: start alone

        serve(costs, 2_000, size -> size < 8 ? 5_000 : 3_000); // batch 2 ties batch 1; 8 and more pay

        assertTrue(costs.chosen() >= 8, "exploration finds the larger sizes that pay: " + costs.chosen());
    }

    @Test
    void aCpuOnWhichATextAloneIsCheapestStaysAtOne() {
        BatchCosts costs = new BatchCosts(32, 32);

        List<Integer> sizes = serve(costs, 2_000, size -> 1_000 + 50.0 * size); // padding and waiting only add

        assertEquals(1, costs.chosen());
        assertTrue(sizes.subList(1_000, 2_000).stream().filter(size -> size == 1).count() > 900);
    }

    @Test
    void aSmallDifferenceDoesNotMoveTheChoice() {
        BatchCosts costs = new BatchCosts(32, 32);

        serve(costs, 2_000, size -> size == 32 ? 1_000 : 990); // 1 % cheaper: under the required gain

        assertEquals(32, costs.chosen());
    }

    @Test
    void theChoiceFollowsTheMachineWhenCostsChange() {
        BatchCosts costs = new BatchCosts(32, 32);
        serve(costs, 2_000, BatchCostsTest::valley);
        assertEquals(31, costs.chosen());

        serve(costs, 4_000, size -> size < 8 ? 3_000 : 6_000); // now small batches are cheapest

        assertTrue(costs.chosen() < 8, "moved to a small size: " + costs.chosen());
    }

    @Test
    void theCostIsPerUnitOfInputSoLongTextsDoNotMakeTheirBatchLookDear() {
        BatchCosts costs = new BatchCosts(32, 32);
        costs.record(32, 32 * 10, 32 * 1_000); // 100 ns per unit
        costs.record(8, 8 * 100, 8 * 5_000); // long texts: dearer per text, 50 ns per unit

        assertEquals(15, costs.chosen(), "cheaper per unit of input");
    }

    @Test
    void aShareOfOneHasNothingToChooseAndCountsNoTake() {
        BatchCosts costs = new BatchCosts(32, 32);

        for (int i = 0; i < 10 * BatchCosts.EXPLORE_EVERY; i++) {
            assertEquals(32, costs.target(1), "a lone input is a batch of one whatever the choice");
        }
        assertEquals(32, costs.target(64), "no exploration was due: the lone takes did not count");
    }

    @Test
    void explorationTriesEveryOtherClassInTurn() {
        assertEquals(List.of(0, 1, 2, 4, 5, 0), List.of(BatchCosts.explored(3, 0, 6), BatchCosts.explored(3, 1, 6),
                BatchCosts.explored(3, 2, 6), BatchCosts.explored(3, 3, 6), BatchCosts.explored(3, 4, 6),
                BatchCosts.explored(3, 5, 6)));
    }

    @Test
    void classesDoubleAndTheLastEndsAtTheBound() {
        BatchCosts costs = new BatchCosts(24, 24);
        assertEquals(24, costs.chosen());
        List<Integer> tops = new ArrayList<>();
        for (int i = 1; i <= 5 * BatchCosts.EXPLORE_EVERY; i++) {
            int target = costs.target(BACKLOG);
            if (i % BatchCosts.EXPLORE_EVERY == 0) {
                tops.add(target);
            }
        }
        assertEquals(List.of(3, 7, 15, 23, 1), tops, "the classes {1} {2,3} {4..7} {8..15} {16..23} {24}, in turn");
    }

    @Test
    void aBoundOfOneHasNoChoice() {
        BatchCosts costs = new BatchCosts(1, 1);

        assertFalse(costs.chooses());
        assertEquals(1, costs.target(BACKLOG));
        assertTrue(new BatchCosts(2, 1).chooses());
    }

    @Test
    void onlyATakeThatLeftABacklogIsTimedAndOnlyWhenThereIsAChoice() {
        BatchCosts costs = BatchCosts.startingAt(32, bound -> bound);

        assertSame(costs, costs.timing(16, 3));
        assertNull(costs.timing(16, 0), "the take emptied the queue");
        assertNull(BatchCosts.startingAt(1, bound -> 1).timing(1, 100), "every input alone: nothing to choose");
    }

    @Test
    void aNewBoundStartsAfreshWhereTheLoadPreferredAndTheSameBoundKeepsTheMeasurements() {
        BatchCosts costs = BatchCosts.startingAt(32, bound -> 1); // the probe found that batching does not pay
        serve(costs, 200, size -> size < 8 ? 5_000 : 3_000);

        assertSame(costs, costs.withBound(32));
        BatchCosts fresh = costs.withBound(16);
        assertEquals(16, fresh.maxBatch());
        assertEquals(1, fresh.chosen(), "starts where the load preferred");
    }

    @Test
    void aPolicyIsBoundedForOneTakeAtTheTarget() {
        BatchPolicy policy = BatchPolicy.of(true, 2, 32, Duration.ZERO);
        BatchCosts costs = BatchCosts.startingAt(32, bound -> 4); // the class 4-7

        assertEquals(7, costs.bound(policy, 100, 1).share(100, 1));
        assertSame(policy, BatchCosts.startingAt(1, bound -> 1).bound(policy, 100, 1));
    }

    @Test
    void refusesABoundOrStartBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> new BatchCosts(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new BatchCosts(8, 0));
    }
}
