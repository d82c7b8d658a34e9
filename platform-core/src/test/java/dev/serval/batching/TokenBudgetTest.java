package dev.serval.batching;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TokenBudgetTest {

    @Test
    void theDefaultsCountNothingForATruncatingModelOfTheDefaultLength() {
        TokenBudget defaults = new TokenBudget(256, 16_384, 262_144);

        assertFalse(defaults.countsBatches(32), "32 x 256 = 8,192 fits 16,384");
        assertFalse(defaults.countsBatches(64), "64 x 256 = 16,384 fits");
        assertEquals(0, defaults.forRequest(256), "256 x 256 = 65,536 fits 262,144");
        assertEquals(0, defaults.forRequest(1_000), "a rerank request of 1,000 documents fits");
    }

    @Test
    void countsWhereTheBudgetCouldBePassed() {
        TokenBudget chunking = new TokenBudget(64 * 256, 16_384, 262_144);

        assertTrue(chunking.countsBatches(2));
        assertEquals(262_144, chunking.forRequest(17), "17 texts of 64 windows could pass it");
        assertEquals(0, chunking.forRequest(16));
        assertTrue(new TokenBudget(256, 16_384, 262_144).countsBatches(65));
    }

    @Test
    void aModelThatReadsNoTokensIsNeverCounted() {
        TokenBudget none = new TokenBudget(0, 1, 1);

        assertFalse(none.countsBatches(1024));
        assertEquals(0, none.forRequest(1_000_000));
    }

    @Test
    void aSingleInputBatchIsNeverCounted() {
        assertFalse(new TokenBudget(256, 10, 1_000_000).countsBatches(1));
    }

    @Test
    void anEmptyBatchTakesAnyInputAnotherOnlyWithinTheBudget() {
        TokenBudget budget = new TokenBudget(512, 100, 1_000);

        assertTrue(budget.fits(0, 0, 512), "an input alone always runs");
        assertTrue(budget.fits(3, 60, 40));
        assertFalse(budget.fits(3, 60, 41));
    }

    @Test
    void refusesBudgetsBelowOne() {
        assertThrows(IllegalArgumentException.class, () -> new TokenBudget(1, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new TokenBudget(1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new TokenBudget(-1, 1, 1));
    }
}
