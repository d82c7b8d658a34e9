package dev.serval.multiplex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.multiplex.Placement.Decision;
import dev.serval.multiplex.Placement.Held;
import dev.serval.multiplex.Placement.Refusal;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a model goes and what makes room for it: the LRU order, the in-flight guard, and the memory bound. */
class PlacementTest {

    private static Held idle(String model, int replica, long lastUsed) {
        return new Held(model, replica, 100, lastUsed, 0, false);
    }

    private static Held busy(String model, int replica, long lastUsed) {
        return new Held(model, replica, 100, lastUsed, 1, true);
    }

    @Test
    void aFreeSlotTakesTheModelWithoutUnloadingAnything() {
        Decision decision = assertInstanceOf(Decision.class,
                Placement.place("c", 100, List.of(idle("a", 0, 1), idle("b", 0, 2)), 2, 2, 0));
        assertEquals(1, decision.replica(), "the replica with fewer models");
        assertEquals(List.of(), decision.evict());
    }

    @Test
    void amongEquallyFullReplicasTheOneWithFewerRequestsTakesIt() {
        List<Held> held = List.of(new Held("a", 0, 100, 1, 5, true), new Held("b", 1, 100, 2, 1, true));
        assertEquals(1, assertInstanceOf(Decision.class, Placement.place("c", 100, held, 2, 2, 0)).replica());
    }

    @Test
    void aFullDeploymentUnloadsTheLeastRecentlyUsedModel() {
        List<Held> held = List.of(idle("a", 0, 30), idle("b", 0, 10), idle("c", 1, 20), idle("d", 1, 40));
        Decision decision = assertInstanceOf(Decision.class, Placement.place("e", 100, held, 2, 2, 0));
        assertEquals(0, decision.replica());
        assertEquals(List.of("b"), decision.evict().stream().map(Held::model).toList());
    }

    @Test
    void aModelWithRequestsInFlightIsNeverUnloadedEvenWhenLeastRecentlyUsed() {
        List<Held> held = List.of(busy("a", 0, 1), idle("b", 0, 50), busy("c", 1, 2), idle("d", 1, 40));
        Decision decision = assertInstanceOf(Decision.class, Placement.place("e", 100, held, 2, 2, 0));
        assertEquals(List.of("d"), decision.evict().stream().map(Held::model).toList(),
                "the oldest idle model, not the oldest busy ones");
        assertEquals(1, decision.replica());
    }

    @Test
    void whenEveryModelIsBusyTheLoadIsRefusedForNow() {
        Refusal refusal = assertInstanceOf(Refusal.class,
                Placement.place("c", 100, List.of(busy("a", 0, 1), busy("b", 0, 2)), 1, 2, 0));
        assertFalse(refusal.tooLarge(), "busy models finish: a later request may succeed");
        assertTrue(refusal.reason().contains("max_models_per_replica (2)"), refusal.reason());
    }

    @Test
    void theMemoryBoundUnloadsLeastRecentlyUsedModelsOfAnyReplica() {
        List<Held> held = List.of(idle("a", 0, 30), idle("b", 1, 10), idle("c", 1, 20));
        // 300 bytes held, 250 allowed: loading 100 more needs 150 freed, two models, oldest first.
        Decision decision = assertInstanceOf(Decision.class, Placement.place("d", 100, held, 2, 4, 250));
        assertEquals(List.of("b", "c"), decision.evict().stream().map(Held::model).toList());
        assertEquals(0, decision.replica());
    }

    @Test
    void aModelLargerThanTheWholeBoundIsRefusedForGood() {
        Refusal refusal = assertInstanceOf(Refusal.class, Placement.place("huge", 1000, List.of(), 1, 2, 999));
        assertTrue(refusal.tooLarge());
        assertTrue(refusal.reason().contains("max_model_memory (999 bytes)"), refusal.reason());
    }

    @Test
    void busyModelsThatHoldTheMemoryRefuseTheLoadForNow() {
        Refusal refusal = assertInstanceOf(Refusal.class,
                Placement.place("c", 100, List.of(busy("a", 0, 1), busy("b", 1, 2)), 2, 4, 250));
        assertFalse(refusal.tooLarge());
    }

    @Test
    void modelsOnAReplicaThatIsGoingAwayCountOnlyAgainstMemory() {
        Decision decision = assertInstanceOf(Decision.class,
                Placement.place("c", 100, List.of(busy("a", 3, 1)), 1, 1, 0));
        assertEquals(0, decision.replica());
        assertEquals(List.of(), decision.evict());
    }
}
