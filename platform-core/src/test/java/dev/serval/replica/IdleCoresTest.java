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
    void aSizeClassTriesEachWayOnceThenLendsWhileWidenedInferencesAreMeasuredClearlyFaster() {
        IdleCores cores = new IdleCores(2);
        assertTrue(cores.prefersWide(1_000), "nothing measured yet: try it wide");
        ran(cores, 1_000, true, 3_000_000);
        assertFalse(cores.prefersWide(1_000), "then narrow, to have both");
        ran(cores, 1_000, false, 5_000_000);
        int n = 4 * IdleCores.EXPLORE_EVERY;
        assertEquals(n - 4, wideChoices(cores, 1_000, n), "wide, but every 64th lone inference of the class is narrow");

        for (int i = 0; i < 40; i++) { // the machine got busy: widened inferences now wait for their second thread
            ran(cores, 1_000, true, 12_000_000);
        }
        assertEquals(4, wideChoices(cores, 1_000, n), "narrow, but every 64th lone inference of the class tries wide");
    }

    @Test
    void aTieIsNotWorthTheCores() {
        IdleCores almost = new IdleCores(2);
        ran(almost, 100, true, 1_000_000);
        ran(almost, 100, false, 1_050_000); // widened only 5 % faster
        assertEquals(4, wideChoices(almost, 100, 4 * IdleCores.EXPLORE_EVERY),
                "narrow but for the exploring");

        IdleCores slower = new IdleCores(2);
        ran(slower, 100, true, 1_050_000); // a widened one measured a little slower
        ran(slower, 100, false, 1_000_000);
        assertEquals(4, wideChoices(slower, 100, 4 * IdleCores.EXPLORE_EVERY));
    }

    @Test
    void shortAndLongInputsAreDecidedApart() {
        IdleCores cores = new IdleCores(2);
        for (int i = 0; i < 8; i++) { // short texts: a second thread buys nothing; long ones: it takes a third off
            ran(cores, 60 + i, true, 1_600_000);
            ran(cores, 60 + i, false, 1_550_000);
            ran(cores, 900 + i, true, 9_800_000);
            ran(cores, 900 + i, false, 13_600_000);
        }
        int n = 4 * IdleCores.EXPLORE_EVERY;
        assertEquals(4, wideChoices(cores, 50, n), "short: narrow");
        assertEquals(n - 4, wideChoices(cores, 1_000, n), "long: wide");
        assertTrue(cores.prefersWide(10_000), "a size class never seen is tried wide first");
    }

    @Test
    void averagesAreKeptPerUnitOfSizeSoThatLengthsWithinAClassCompare() {
        IdleCores cores = new IdleCores(2);
        assertEquals(IdleCores.sizeClass(600), IdleCores.sizeClass(1_000));
        ran(cores, 1_000, true, 6_000_000); // 6 µs per character, widened
        ran(cores, 600, false, 4_200_000); // 7 µs per character: faster in all, only because the text was shorter
        assertEquals(4 * IdleCores.EXPLORE_EVERY - 4,
                wideChoices(cores, 800, 4 * IdleCores.EXPLORE_EVERY));
    }

    @Test
    void sizeClassesAreBitLengths() {
        assertEquals(1, IdleCores.sizeClass(0), "a size below 1 counts as 1");
        assertEquals(1, IdleCores.sizeClass(1));
        assertEquals(2, IdleCores.sizeClass(2));
        assertEquals(2, IdleCores.sizeClass(3));
        assertEquals(10, IdleCores.sizeClass(1_000));
        assertEquals(63, IdleCores.sizeClass(Long.MAX_VALUE));
    }

    /** One lone inference of {@code size} that ran {@code wide} or not and took {@code nanos}, as the pool calls. */
    private static void ran(IdleCores cores, long size, boolean wide, long nanos) {
        cores.take();
        if (wide) {
            assertTrue(cores.borrowAll(), "alone: it can borrow");
        }
        cores.lone(size, wide, nanos);
        cores.release(wide);
    }

    /** How many of the next {@code n} lone inferences of {@code size} prefer to borrow the cores. */
    private static int wideChoices(IdleCores cores, long size, int n) {
        int wide = 0;
        for (int i = 0; i < n; i++) {
            wide += cores.prefersWide(size) ? 1 : 0;
        }
        return wide;
    }
}
