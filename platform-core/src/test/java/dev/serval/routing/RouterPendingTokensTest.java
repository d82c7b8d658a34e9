package dev.serval.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@code max_pending_tokens}: the estimated tokens of every request the router admitted and has not answered (queued
 * or running), deployment-wide. A request reserves its estimate (at most the limit) before it takes a slot or a queue
 * place, is refused with {@link Overloaded} past it, and gives it back exactly once however it ends.
 */
class RouterPendingTokensTest {

    private static final long NO_DEADLINE = Long.MAX_VALUE;

    /** Slots for 8 requests, 8 queue places, 1,000 pending tokens. */
    private final Router<String, String> router = new Router<>("d", 8, 1_000, () -> 0,
            DeploymentMetrics.discarding("d"));
    private final TestReplica replica = TestReplica.held(0, 8);

    private CompletableFuture<List<String>> submit(long cost) {
        return router.submit(List.of("text"), NO_DEADLINE, cost);
    }

    @Test
    void requestsOfLongTextsFillTheLimitTheNextIsRefusedAndAShortOneIsAdmittedOnceTheyComplete() throws Exception {
        router.publish(RoutingSnapshot.of(List.of(replica)));
        CompletableFuture<List<String>> first = submit(400);
        CompletableFuture<List<String>> second = submit(400);
        assertEquals(800, router.pendingTokens().count());

        Overloaded refused = assertThrows(Overloaded.class, () -> submit(300));

        assertEquals("model 'd' is overloaded: its admitted requests hold an estimated 800 tokens and this one is "
                + "estimated at 300 (max_pending_tokens 1000)", refused.getMessage());
        // Paced like a full queue: the initial 10 ms per request for the two ahead of it and its own.
        assertEquals(Duration.ofMillis(30), refused.retryAfter());
        assertEquals(800, router.pendingTokens().count(), "the refused request holds nothing");
        assertEquals(2, replica.inFlight(), "nor a slot");
        CompletableFuture<List<String>> small = submit(200); // what is left still admits a smaller request
        assertEquals(1_000, router.pendingTokens().count());
        assertThrows(Overloaded.class, router::refuseIfFull, "refused on its headers while nothing is left");

        replica.finishNext("a");
        replica.finishNext("b");
        assertEquals(List.of("a"), first.get());
        assertEquals(List.of("b"), second.get());
        assertEquals(200, router.pendingTokens().count(), "given back before their callers saw the answer");
        CompletableFuture<List<String>> after = submit(300);
        assertEquals(500, router.pendingTokens().count());
        replica.finishNext("c");
        replica.finishNext("d");
        small.get();
        after.get();
        assertEquals(0, router.pendingTokens().count());
    }

    @Test
    void aRequestLargerThanTheLimitIsAdmittedOnlyWhenNothingElseIsPending() throws Exception {
        router.publish(RoutingSnapshot.of(List.of(replica)));
        CompletableFuture<List<String>> small = submit(1);

        Overloaded refused = assertThrows(Overloaded.class, () -> submit(50_000));
        assertTrue(refused.getMessage().contains("estimated at 50000 (max_pending_tokens 1000)"),
                refused.getMessage());

        replica.finishNext("small");
        small.get();
        CompletableFuture<List<String>> large = submit(50_000);
        assertEquals(1_000, router.pendingTokens().count(), "it reserves the whole limit, no more");
        assertThrows(Overloaded.class, () -> submit(1));
        replica.finishNext("large");
        large.get();
        assertEquals(0, router.pendingTokens().count());
    }

    @Test
    void requestsThatCostNothingAreNeverCountedNorRefusedForTokens() {
        router.publish(RoutingSnapshot.of(List.of(replica)));
        submit(5_000);

        submit(0);
        submit(0);

        assertEquals(1_000, router.pendingTokens().count());
        assertEquals(3, replica.inFlight());
    }

    @Test
    void aQueuedRequestHoldsItsTokensUntilItIsAnswered() throws Exception {
        TestReplica one = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(one)));
        CompletableFuture<List<String>> running = submit(300);
        CompletableFuture<List<String>> queued = submit(300);
        assertEquals(1, router.queuedRequests());
        assertEquals(600, router.pendingTokens().count());

        one.finishNext("first");
        running.get();
        assertEquals(300, router.pendingTokens().count(), "the dispatched request still holds its tokens");
        one.finishNext("second");
        queued.get();
        assertEquals(0, router.pendingTokens().count());
    }

    @Test
    void aCancelledRequestGivesItsTokensBackOnceWhetherQueuedOrRunning() {
        TestReplica one = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(one)));
        CompletableFuture<List<String>> running = submit(300);
        CompletableFuture<List<String>> queued = submit(200);

        queued.cancel(false);
        queued.cancel(false);
        assertEquals(300, router.pendingTokens().count());
        running.cancel(false);
        assertEquals(0, router.pendingTokens().count());

        one.finishNext("late"); // the cancelled run completes on its predictor: nothing more is given back
        assertEquals(0, router.pendingTokens().count());
        assertEquals(0, one.inFlight());
    }

    @Test
    void aRequestEndedByItsDeadlineGivesItsTokensBackOnceWhetherQueuedOrRunning() {
        TestReplica one = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(one)));
        CompletableFuture<List<String>> running = submit(300);
        CompletableFuture<List<String>> queued = submit(200);

        queued.completeExceptionally(new DeadlineExceeded("deadline passed"));
        assertEquals(300, router.pendingTokens().count());
        running.completeExceptionally(new DeadlineExceeded("deadline passed"));
        assertEquals(0, router.pendingTokens().count());
        one.finishNext("late");
        assertEquals(0, router.pendingTokens().count());
    }

    @Test
    void aQueuedRequestWhoseDeadlinePassedWhenDrainedGivesItsTokensBack() {
        long[] now = {0};
        Router<String, String> timed = new Router<>("d", 8, 1_000, () -> now[0], DeploymentMetrics.discarding("d"));
        TestReplica one = TestReplica.held(0, 1);
        timed.publish(RoutingSnapshot.of(List.of(one)));
        timed.submit(List.of("running"), NO_DEADLINE, 300);
        CompletableFuture<List<String>> expiring = timed.submit(List.of("queued"), 10, 200);

        now[0] = 20;
        one.finishNext("done"); // the drain finds the queued request past its deadline

        assertInstanceOf(DeadlineExceeded.class, assertThrows(ExecutionException.class, expiring::get).getCause());
        assertEquals(0, timed.pendingTokens().count());
    }

    @Test
    void aRequestTheReplicaRefusesGivesItsTokensBack() {
        router.publish(RoutingSnapshot.of(List.of(replica)));
        replica.beforeRun = () -> {
            throw new InvalidInput("text 0 is bad");
        };

        CompletableFuture<List<String>> refused = submit(300);

        assertInstanceOf(InvalidInput.class, assertThrows(ExecutionException.class, refused::get).getCause());
        assertEquals(0, router.pendingTokens().count());
        assertEquals(0, replica.inFlight());
    }

    @Test
    void aRequestRefusedForAFullQueueAfterReservingGivesItsTokensBack() {
        Router<String, String> small = new Router<>("d", 1, 1_000, () -> 0, DeploymentMetrics.discarding("d"));
        TestReplica one = TestReplica.held(0, 1);
        small.publish(RoutingSnapshot.of(List.of(one)));
        small.submit(List.of("running"), NO_DEADLINE, 100);
        small.submit(List.of("queued"), NO_DEADLINE, 100);

        Overloaded refused = assertThrows(Overloaded.class, () -> small.submit(List.of("x"), NO_DEADLINE, 100));

        assertTrue(refused.getMessage().contains("max-queued-requests 1"), refused.getMessage());
        assertEquals(200, small.pendingTokens().count());
    }

    @Test
    void queuedRequestsFailedByARefusalOrCloseGiveTheirTokensBack() {
        TestReplica one = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(one)));
        submit(300);
        CompletableFuture<List<String>> queued = submit(200);

        router.refuse("no replica will start");

        assertInstanceOf(NotReady.class, assertThrows(ExecutionException.class, queued::get).getCause());
        assertEquals(300, router.pendingTokens().count());
    }

    @Test
    void theLimitChangesInPlaceAndTokensAlreadyHeldStay() {
        router.publish(RoutingSnapshot.of(List.of(replica)));
        CompletableFuture<List<String>> held = submit(600);

        router.pendingTokens().limit(500);
        assertEquals(500, router.pendingTokens().limit());
        assertThrows(Overloaded.class, () -> submit(1), "600 held, above the lowered limit");
        router.pendingTokens().limit(2_000);
        submit(1_400);

        assertEquals(2_000, router.pendingTokens().count());
        held.cancel(false);
        assertEquals(1_400, router.pendingTokens().count(), "it gives back the 600 it took, not the limit's share");
    }

    /**
     * Submitters and completers on real threads, each request ended one of three ways (answered, cancelled by its
     * caller, failed by its deadline) while others are admitted and refused: the count never goes below 0 (a release
     * past it throws, and the completers record it) and is 0 once every request ended.
     */
    @Test
    void theCountNeverGoesNegativeNorLeaksUnderConcurrentRequests() throws Exception {
        int submitters = 4;
        int perSubmitter = 500;
        Router<String, String> shared = new Router<>("d", 64, 2_000, System::nanoTime,
                DeploymentMetrics.discarding("d"));
        TestReplica a = TestReplica.held(0, 4);
        TestReplica b = TestReplica.held(1, 4);
        shared.publish(RoutingSnapshot.of(List.of(a, b)));
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<List<String>>> admitted = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch submitted = new CountDownLatch(submitters);
        AtomicBoolean done = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < submitters; s++) {
            int id = s;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int r = 0; r < perSubmitter; r++) {
                        try {
                            CompletableFuture<List<String>> request = shared.submit(List.of("x"), Long.MAX_VALUE,
                                    1 + (id * 131L + r * 37L) % 700);
                            admitted.add(request);
                            if (r % 3 == 1) {
                                request.cancel(false);
                            } else if (r % 3 == 2) {
                                request.completeExceptionally(new DeadlineExceeded("deadline passed"));
                            }
                        } catch (Overloaded refused) {
                            // refused for tokens or a full queue: holds nothing
                        }
                        if (shared.pendingTokens().count() < 0) {
                            failures.add(new AssertionError("negative: " + shared.pendingTokens().count()));
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                } finally {
                    submitted.countDown();
                }
            }));
        }
        for (TestReplica replica : List.of(a, b)) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    while (!done.get()) {
                        if (!replica.tryFinishNext()) {
                            Thread.onSpinWait();
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }

        start.countDown();
        assertTrue(submitted.await(60, TimeUnit.SECONDS), "the submitters finished");
        for (CompletableFuture<List<String>> request : List.copyOf(admitted)) {
            try {
                request.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException | java.util.concurrent.CancellationException ended) {
                // ended by its caller
            }
        }
        done.set(true);
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(thread.isAlive());
        }
        assertEquals(List.of(), failures);
        assertFalse(admitted.isEmpty());
        assertEquals(0, shared.pendingTokens().count(), "every reservation was given back");
        assertEquals(0, shared.queuedRequests());
        assertEquals(0, a.inFlight() + b.inFlight());
    }
}
