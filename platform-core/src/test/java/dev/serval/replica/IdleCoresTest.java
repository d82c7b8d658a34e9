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

    @Test
    void lendsWhileWidenedLoneInferencesAreMeasuredFasterAndExploresTheOtherWay() {
        IdleCores cores = new IdleCores(2);
        assertTrue(cores.prefersWide(), "nothing measured yet: try it");
        cores.lone(true, 3_000_000);
        cores.lone(false, 5_000_000);
        int wide = 0;
        for (int i = 2; i <= 4 * IdleCores.EXPLORE_EVERY; i++) {
            wide += cores.prefersWide() ? 1 : 0;
        }
        assertEquals(4 * IdleCores.EXPLORE_EVERY - 1 - 4, wide, "wide, but every 16th lone inference runs narrow");

        for (int i = 0; i < 20; i++) { // the machine got busy: widened inferences now wait for their second thread
            cores.lone(true, 12_000_000);
        }
        int narrow = 0;
        for (int i = 0; i < 4 * IdleCores.EXPLORE_EVERY; i++) {
            narrow += cores.prefersWide() ? 0 : 1;
        }
        assertEquals(4 * IdleCores.EXPLORE_EVERY - 4, narrow, "narrow, but every 16th lone inference tries wide");
    }
}
