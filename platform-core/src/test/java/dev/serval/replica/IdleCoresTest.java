package dev.serval.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The lending rule on its own: who may borrow every core, and who waits for whom. */
class IdleCoresTest {

    @Test
    void aPredictorAloneBorrowsEveryCoreAndNobodyElseCanWhileItHoldsThem() {
        IdleCores cores = new IdleCores(3);
        cores.take();
        assertTrue(cores.borrowAll(), "the other two predictors are idle");
        cores.release(true);

        cores.take();
        assertTrue(cores.borrowAll(), "released whole: everything is free again");
        cores.release(true);
    }

    @Test
    void noPredictorBorrowsWhileAnotherRuns() {
        IdleCores cores = new IdleCores(2);
        cores.take(); // a predictor running on its own share
        cores.take(); // the second one
        assertFalse(cores.borrowAll(), "the first one still holds its share");
        cores.release(false);
        cores.release(false);
        cores.take();
        assertTrue(cores.borrowAll());
        cores.release(true);
    }

    @Test
    void aPredictorWaitsForABorrowerToGiveTheCoresBack() throws Exception {
        IdleCores cores = new IdleCores(2);
        cores.take();
        assertTrue(cores.borrowAll());
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> {
            cores.take();
            return cores.borrowAll();
        }, Thread::startVirtualThread);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (cores.waiting() == 0) {
            assertFalse(second.isDone(), "took a share the borrower holds");
            assertTrue(System.nanoTime() < deadline, "never waited");
            Thread.yield();
        }
        assertFalse(second.isDone());

        cores.release(true);

        assertTrue(second.get(10, TimeUnit.SECONDS), "alone once the borrower is done, it borrows in turn");
        assertEquals(0, cores.waiting());
    }

    @Test
    void needsTwoPredictorsToLendAnything() {
        assertThrows(IllegalArgumentException.class, () -> new IdleCores(1));
    }
}
