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
import java.util.concurrent.ExecutionException;
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
}
