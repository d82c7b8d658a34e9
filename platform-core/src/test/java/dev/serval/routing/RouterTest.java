package dev.serval.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class RouterTest {

    private final Router<String, String> router = new Router<>("d", 2, System::nanoTime);

    @Test
    void refusesWithNotReadyWhileNoReplicaIsRoutable() {
        NotReady error = assertThrows(NotReady.class, () -> router.submit(List.of("x")));
        assertEquals("model 'd' has no running replica", error.getMessage());
    }

    @Test
    void powerOfTwoChoicesPrefersTheLessLoadedReplica() {
        TestReplica busy = TestReplica.held(0, 100);
        TestReplica idle = TestReplica.held(1, 100);
        for (int i = 0; i < 50; i++) {
            busy.slots.tryAcquire();
        }
        router.publish(RoutingSnapshot.of(List.of(busy, idle)));

        for (int i = 0; i < 20; i++) {
            router.submit(List.of("x"));
        }

        assertEquals(20, idle.inFlight());
        assertEquals(50, busy.inFlight());
    }

    @Test
    void queuesWhenEveryReplicaIsFullAndDispatchesWhenASlotFrees() throws Exception {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));

        CompletableFuture<List<String>> first = router.submit(List.of("a"));
        CompletableFuture<List<String>> second = router.submit(List.of("b"));
        assertEquals(1, router.queuedRequests());
        assertEquals(1, replica.pendingRuns());

        replica.finishNext("A");
        assertEquals(List.of("A"), first.get());
        assertEquals(0, router.queuedRequests(), "the freed slot went to the queued request");
        replica.finishNext("B");
        assertEquals(List.of("B"), second.get());
        assertEquals(0, replica.inFlight());
    }

    @Test
    void refusesPastTheQueueBoundWithARetryAfter() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        router.submit(List.of("queued 1"));
        router.submit(List.of("queued 2"));

        Overloaded refused = assertThrows(Overloaded.class, () -> router.submit(List.of("refused")));

        assertEquals(2, router.queuedRequests());
        // No request completed yet: the estimate is the initial 10 ms per request for the two queued and this one.
        assertEquals(Duration.ofMillis(30), refused.retryAfter());
        assertTrue(refused.getMessage().contains("max-queued-requests 2"), refused.getMessage());
        Overloaded onHeaders = assertThrows(Overloaded.class, router::refuseIfFull);
        assertEquals(refused.retryAfter(), onHeaders.retryAfter());
    }

    @Test
    void refusesOnItsHeadersOnlyOnceTheQueueIsFull() {
        Router<String, String> router = new Router<>("m", 1, () -> 0);
        TestReplica replica = TestReplica.held(1, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        router.refuseIfFull(); // a free place in the queue: no refusal

        router.submit(List.of("queued"));

        assertThrows(Overloaded.class, router::refuseIfFull);
    }

    @Test
    void aPublishedReplicaTakesQueuedRequests() throws Exception {
        TestReplica full = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(full)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));

        TestReplica added = TestReplica.held(1, 1);
        router.publish(RoutingSnapshot.of(List.of(full, added)));

        assertEquals(0, router.queuedRequests());
        added.finishNext("from the new replica");
        assertEquals(List.of("from the new replica"), queued.get());
    }

    @Test
    void aCancelledQueuedRequestNeverRuns() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));

        queued.cancel(false);
        replica.finishNext("done");

        assertEquals(0, replica.pendingRuns(), "the cancelled request was skipped");
        assertEquals(0, replica.inFlight());
    }

    @Test
    void failingTheQueueAnswersEveryWaitingRequestWithTheReason() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));

        router.failQueued("model 'd' failed to load: no such file");

        ExecutionException failure = assertThrows(ExecutionException.class, queued::get);
        assertEquals("model 'd' failed to load: no such file", failure.getCause().getMessage());
        assertEquals(0, router.queuedRequests());
    }

    @Test
    void aRequestFailedByItsCallerWhileQueuedNeverRuns() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));

        queued.completeExceptionally(new dev.serval.error.DeadlineExceeded("deadline passed"));
        replica.finishNext("done");

        assertEquals(0, replica.pendingRuns(), "the expired request was skipped");
        assertEquals(0, replica.inFlight());
    }

    @Test
    void closingFailsQueuedRequestsAndRefusesNewOnes() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));

        router.close();

        ExecutionException failure = assertThrows(ExecutionException.class, queued::get);
        assertInstanceOf(NotReady.class, failure.getCause());
        assertThrows(NotReady.class, () -> router.submit(List.of("late")));
        assertFalse(queued.isCancelled());
    }

    /**
     * The lost wake-up: a submitter has taken its queue place but not yet queued its request; a completion frees the
     * only slot, drains (takes the slot, finds the queue empty) and, before it gives the slot back, the submitter queues
     * and drains in turn (finds no free slot). The request must still be dispatched, not left beside a free slot.
     */
    @Test
    void aRequestQueuedWhileACompletionDrainsAnEmptyQueueIsStillDispatched() throws Exception {
        AtomicReference<Thread> gatedSubmitter = new AtomicReference<>();
        CountDownLatch submitterHasQueuePlace = new CountDownLatch(1);
        CountDownLatch submitterMayQueue = new CountDownLatch(1);
        // The router reads the clock once between taking a queue place and queueing (the request's queue time).
        Router<String, String> gated = new Router<>("d", 2, () -> {
            if (gatedSubmitter.compareAndSet(Thread.currentThread(), null)) {
                submitterHasQueuePlace.countDown();
                await(submitterMayQueue);
            }
            return System.nanoTime();
        });
        TestReplica replica = TestReplica.held(0, 1);
        gated.publish(RoutingSnapshot.of(List.of(replica)));
        CompletableFuture<List<String>> first = gated.submit(List.of("a"));

        AtomicReference<CompletableFuture<List<String>>> second = new AtomicReference<>();
        Thread submitter = Thread.ofPlatform().unstarted(() -> second.set(gated.submit(List.of("b"))));
        gatedSubmitter.set(submitter);
        submitter.start();
        await(submitterHasQueuePlace);

        CountDownLatch completerHoldsEmptyHandedSlot = new CountDownLatch(1);
        CountDownLatch completerMayRelease = new CountDownLatch(1);
        AtomicReference<Thread> completerThread = new AtomicReference<>();
        int[] releases = {0};
        replica.beforeRelease = () -> {
            // The completer's first release gives back the finished request's slot; its second gives back the slot
            // its drain took and found nothing to run on.
            if (Thread.currentThread() == completerThread.get() && ++releases[0] == 2) {
                completerHoldsEmptyHandedSlot.countDown();
                await(completerMayRelease);
            }
        };
        Thread completer = Thread.ofPlatform().unstarted(() -> replica.finishNext("A"));
        completerThread.set(completer);
        completer.start();
        await(completerHoldsEmptyHandedSlot);

        submitterMayQueue.countDown();
        submitter.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(submitter.isAlive(), "the submitter returned");
        completerMayRelease.countDown();
        completer.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(completer.isAlive(), "the completer returned");

        assertEquals(List.of("A"), first.get(10, TimeUnit.SECONDS));
        assertEquals(0, gated.queuedRequests(), "the queued request was dispatched to the freed slot");
        assertEquals(1, replica.pendingRuns());
        replica.finishNext("B");
        assertEquals(List.of("B"), second.get().get(10, TimeUnit.SECONDS));
        assertEquals(0, replica.inFlight());
    }

    @Test
    void aCancelledQueuedRequestLeavesTheQueueAtOnceAndReleasesItsInputs() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        Queued queued = submitPayload(router);
        router.submit(List.of("also queued"));

        queued.result.cancel(false);

        assertEquals(1, router.queuedRequests(), "its queue place was given back at once");
        router.submit(List.of("takes the freed place")); // would be Overloaded (max 2) if the place were still taken
        assertEquals(2, router.queuedRequests());
        assertUnreachable(queued.inputs);
    }

    @Test
    void aQueuedRequestWhoseDeadlinePassesLeavesTheQueueAtOnceAndReleasesItsInputs() {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        Queued queued = submitPayload(router);

        queued.result.completeExceptionally(new dev.serval.error.DeadlineExceeded("deadline passed"));

        assertEquals(0, router.queuedRequests());
        assertUnreachable(queued.inputs);
        replica.finishNext("done");
        assertEquals(0, replica.pendingRuns(), "the expired request never ran");
        assertEquals(0, replica.inFlight());
    }

    @Test
    void aDeadlineThatEndsTheCallerWhileItsRunStartsCancelsTheRunAndFreesTheSlot() throws Exception {
        TestReplica replica = TestReplica.held(0, 1);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        router.submit(List.of("running"));
        CompletableFuture<List<String>> queued = router.submit(List.of("queued"));
        // The deadline fires on another thread after the drain called run() and before it recorded the run.
        replica.beforeRun = () -> queued.completeExceptionally(new dev.serval.error.DeadlineExceeded("deadline passed"));

        replica.finishNext("done"); // frees the slot: the drain dispatches the queued request

        assertEquals(1, replica.pendingRuns());
        assertTrue(replica.pending().getFirst().isCancelled(), "the run of the ended request was cancelled");
        assertEquals(0, replica.inFlight(), "its slot was given back");
    }

    private record Queued(CompletableFuture<List<String>> result, java.lang.ref.WeakReference<List<String>> inputs) {
    }

    /** Queues a request whose inputs only the router holds, so their reachability shows what the router keeps. */
    private static Queued submitPayload(Router<String, String> router) {
        List<String> inputs = new java.util.ArrayList<>(List.of("x".repeat(1 << 16)));
        return new Queued(router.submit(inputs), new java.lang.ref.WeakReference<>(inputs));
    }

    private static void assertUnreachable(java.lang.ref.WeakReference<?> reference) {
        for (int i = 0; i < 20 && reference.get() != null; i++) {
            System.gc();
        }
        assertTrue(reference.get() == null, "the inputs are still referenced");
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new AssertionError("the interleaving never reached its next step");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void tellsTheAutoscalerOnceThatRequestsArrived() {
        router.publish(RoutingSnapshot.of(List.of(TestReplica.answering(1, 4))));
        assertFalse(router.takeArrived());
        router.submit(List.of("a"));
        router.submit(List.of("b"));
        assertTrue(router.takeArrived());
        assertFalse(router.takeArrived(), "until the next request");
    }

    @Test
    void queuesWhileEmptyOnlyWhenToldAndRefusesPastTheBoundWithTheExpectedStart() {
        assertThrows(NotReady.class, () -> router.submit(List.of("x")));
        router.queueWhileEmpty(3_000_000_000L);
        CompletableFuture<List<String>> first = router.submit(List.of("a"));
        router.submit(List.of("b"));
        dev.serval.error.Overloaded refused = assertThrows(dev.serval.error.Overloaded.class,
                () -> router.submit(List.of("c")));
        assertEquals(java.time.Duration.ofSeconds(3), refused.retryAfter());
        router.publish(RoutingSnapshot.of(List.of(TestReplica.held(1, 4))));
        assertEquals(0, router.queuedRequests(), "the new replica took what waited");
        assertFalse(first.isDone());
        router.refuseWhileEmpty();
        assertFalse(router.queuesWhileEmpty());
    }
}
