package dev.serval.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Real threads: submitters and completers race on a router whose replicas are almost always full, so requests queue
 * and every completion drains. Each round ends only when every request of the round has its answer; a request left in
 * the queue beside a free slot (a lost wake-up) would never get one, since the round's last completion has passed.
 * Random short pauses (a few hundred spin-wait hints, no sleeps) shift the threads against each other from round to
 * round, across the two windows of a lost wake-up: a drain holding a slot it found no request for (the test replica
 * pauses before a slot is given back) and a submitter holding a queue place for a request not queued yet (the router
 * reads its clock in between, and the test clock pauses).
 */
class RouterStressTest {

    private static final long ROUND_SECONDS = 10;

    /** One submitter queues a request while one completer frees the only slot, timed to the submitter's queue place. */
    @Test
    void aRequestQueuedWhileTheOnlySlotFreesIsAlwaysAnswered() throws Exception {
        TestReplica replica = TestReplica.held(0, 1);
        replica.beforeRelease = RouterStressTest::pause;
        Router<String, String> router = new Router<>("d", 4, RouterStressTest::pausingClock);
        router.publish(RoutingSnapshot.of(List.of(replica)));
        AtomicReference<CompletableFuture<List<String>>> queued = new AtomicReference<>();
        AtomicBoolean roundOpen = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        CyclicBarrier start = new CyclicBarrier(3);
        CyclicBarrier submitted = new CyclicBarrier(2);
        CyclicBarrier done = new CyclicBarrier(3);
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        Thread submitter = Thread.ofPlatform().start(() -> {
            try {
                while (true) {
                    start.await();
                    if (stop.get()) {
                        return;
                    }
                    queued.set(router.submit(List.of("queued")));
                    submitted.await();
                    done.await();
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        });
        Thread completer = Thread.ofPlatform().start(() -> {
            try {
                while (true) {
                    start.await();
                    if (stop.get()) {
                        return;
                    }
                    // Finish the running request once the submitter holds its queue place (or is through).
                    while (router.queuedRequests() == 0 && queued.get() == null) {
                        Thread.onSpinWait();
                    }
                    pause();
                    while (roundOpen.get()) {
                        if (!replica.tryFinishNext()) {
                            Thread.yield();
                        }
                    }
                    done.await();
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        });

        for (int i = 0; i < 3000 && failures.isEmpty(); i++) {
            CompletableFuture<List<String>> running = router.submit(List.of("running"));
            queued.set(null);
            roundOpen.set(true);
            start.await(ROUND_SECONDS, TimeUnit.SECONDS);
            running.get(ROUND_SECONDS, TimeUnit.SECONDS);
            submitted.await(ROUND_SECONDS, TimeUnit.SECONDS);
            awaitAnswer(queued.get(), i, router, replica);
            roundOpen.set(false);
            done.await(ROUND_SECONDS, TimeUnit.SECONDS);
            assertEquals(0, router.queuedRequests(), "round " + i + ": the queue emptied");
            assertEquals(0, replica.inFlight(), "round " + i + ": every slot was given back");
        }
        stop.set(true);
        start.await(ROUND_SECONDS, TimeUnit.SECONDS);
        submitter.join(TimeUnit.SECONDS.toMillis(ROUND_SECONDS));
        completer.join(TimeUnit.SECONDS.toMillis(ROUND_SECONDS));
        assertFalse(submitter.isAlive() || completer.isAlive());
        assertEquals(List.of(), failures);
    }

    /** Several submitters and completers on two replicas: every request is answered, slots and queue return to 0. */
    @Test
    void everyRequestOfManySubmittersIsAnsweredAndSlotsAndQueueReturnToZero() throws Exception {
        int submitters = 3;
        int perSubmitter = 4;
        TestReplica a = TestReplica.held(0, 1);
        TestReplica b = TestReplica.held(1, 1);
        a.beforeRelease = RouterStressTest::pause;
        b.beforeRelease = RouterStressTest::pause;
        Router<String, String> router = new Router<>("d", submitters * perSubmitter, RouterStressTest::pausingClock);
        router.publish(RoutingSnapshot.of(List.of(a, b)));
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean roundOpen = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        CyclicBarrier start = new CyclicBarrier(submitters + 2 + 1);
        CyclicBarrier submitted = new CyclicBarrier(submitters + 1);
        CyclicBarrier answered = new CyclicBarrier(2 + 1);
        List<CompletableFuture<List<String>>> round = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < submitters; s++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    while (true) {
                        start.await();
                        if (stop.get()) {
                            return;
                        }
                        for (int r = 0; r < perSubmitter; r++) {
                            round.add(router.submit(List.of("x")));
                        }
                        submitted.await();
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (TestReplica first : List.of(a, b)) {
            TestReplica other = first == a ? b : a;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    while (true) {
                        start.await();
                        if (stop.get()) {
                            return;
                        }
                        while (roundOpen.get()) {
                            if (!first.tryFinishNext() && !other.tryFinishNext()) {
                                Thread.yield();
                            }
                        }
                        answered.await();
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }

        for (int i = 0; i < 500 && failures.isEmpty(); i++) {
            round.clear();
            roundOpen.set(true);
            start.await(ROUND_SECONDS, TimeUnit.SECONDS);
            submitted.await(ROUND_SECONDS, TimeUnit.SECONDS);
            for (CompletableFuture<List<String>> request : List.copyOf(round)) {
                awaitAnswer(request, i, router, a, b);
            }
            roundOpen.set(false);
            answered.await(ROUND_SECONDS, TimeUnit.SECONDS);
            assertEquals(0, router.queuedRequests(), "round " + i + ": the queue emptied");
            assertEquals(0, a.inFlight() + b.inFlight(), "round " + i + ": every slot was given back");
        }
        stop.set(true);
        start.await(ROUND_SECONDS, TimeUnit.SECONDS);
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(ROUND_SECONDS));
            assertFalse(thread.isAlive());
        }
        assertEquals(List.of(), failures);
    }

    private static long pausingClock() {
        pause();
        return System.nanoTime();
    }

    private static void pause() {
        for (int i = ThreadLocalRandom.current().nextInt(300); i > 0; i--) {
            Thread.onSpinWait();
        }
    }

    private static void awaitAnswer(CompletableFuture<List<String>> request, int round, Router<?, ?> router,
            TestReplica... replicas) throws Exception {
        try {
            request.get(ROUND_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            StringBuilder state = new StringBuilder();
            for (TestReplica replica : replicas) {
                state.append(", replica ").append(replica.id).append(": ").append(replica.inFlight())
                        .append(" in flight, ").append(replica.pendingRuns()).append(" pending");
            }
            throw new AssertionError("round " + round + ": a request was never answered; "
                    + router.queuedRequests() + " queued" + state);
        }
    }
}
