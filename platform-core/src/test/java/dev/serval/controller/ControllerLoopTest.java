package dev.serval.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The controller thread with an empty controller: every task is run or refused, none is dropped. */
class ControllerLoopTest {

    private final ControllerLoop loop = new ControllerLoop(Duration.ofSeconds(1), Thread.ofPlatform().factory());

    ControllerLoopTest() {
        loop.start(new Controller(System::nanoTime, loop));
    }

    @Test
    void aTaskSubmittedAfterCloseIsRefusedAndItsFutureFailsAtOnce() {
        loop.close();

        assertThrows(RejectedExecutionException.class, () -> loop.execute(() -> { }));
        CompletableFuture<Void> refused = loop.submit(() -> { });
        assertTrue(refused.isCompletedExceptionally(), "the caller is told now, not left waiting");
        ExecutionException failure = assertThrows(ExecutionException.class, refused::get);
        assertInstanceOf(RejectedExecutionException.class, failure.getCause());
    }

    @Test
    void everyTaskAcceptedBeforeOrWhileTheLoopClosesRunsBeforeCloseReturns() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            running.countDown();
            awaitIgnoringInterrupts(release); // a task in progress while close begins
        });
        assertTrue(running.await(10, TimeUnit.SECONDS));
        CompletableFuture<Void> queued = loop.submit(() -> { });
        Thread closer = Thread.ofPlatform().start(loop::close);

        // Submit until the loop refuses (close has begun): every task it accepted meanwhile must still run.
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                loop.execute(ran::incrementAndGet);
                accepted.incrementAndGet();
            } catch (RejectedExecutionException e) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, "the loop never refused a task after close");
            Thread.yield();
        }
        release.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(closer.isAlive());

        assertTrue(queued.isDone() && !queued.isCompletedExceptionally(), "the task queued before close ran");
        assertEquals(accepted.get(), ran.get(), "every accepted task ran");
    }

    @Test
    void aSubmittedTaskThatThrowsFailsItsFutureAndTheLoopGoesOn() throws Exception {
        CompletableFuture<Void> failing = loop.submit(() -> {
            throw new IllegalStateException("bad spec");
        });
        ExecutionException failure = assertThrows(ExecutionException.class, () -> failing.get(10, TimeUnit.SECONDS));
        assertEquals("bad spec", failure.getCause().getMessage());

        loop.submit(() -> { }).get(10, TimeUnit.SECONDS);
        loop.close();
    }

    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // the old close interrupted the task in progress; this one finishes regardless
            }
        }
    }
}
