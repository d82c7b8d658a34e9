package dev.serval.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.admission.RetryAfter;
import dev.serval.request.CallContext;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How a predictor takes its next task from the {@link InputQueue}: spinning for a while, then asleep. */
class InputQueueTest {

    private static final long AN_HOUR = Duration.ofHours(1).toNanos();

    private final InputQueue<String, String> queue = new InputQueue<>("d", 16, RetryAfter.servicePaced(1));
    private final List<Taker> takers = new java.util.ArrayList<>();

    /** A taker left spinning by a failed test would burn a core for an hour. */
    @AfterEach
    void stopTakers() {
        takers.forEach(taker -> taker.thread.interrupt());
    }

    @Test
    void aQueuedTaskIsTakenAtOnceWhateverTheSpin() throws Exception {
        PoolRequest<String, String> request = queue.admit(List.of("a"), CallContext.NO_DEADLINE, 0);
        assertSame(request, queue.take(AN_HOUR).request());
        queue.admit(List.of("b"), CallContext.NO_DEADLINE, 0);
        assertEquals(0, queue.take(0).index());
    }

    /**
     * Requests take turns, one input each (round robin), so that a one-text request queued behind a request of many
     * texts waits for one of them, not for all: one client's large requests cannot hold up everyone else's small ones.
     * Each request's own inputs still go in order.
     */
    @Test
    void requestsTakeTurnsSoThatASmallOneNeverWaitsBehindALargeOne() {
        PoolRequest<String, String> large = queue.admit(List.of("l0", "l1", "l2", "l3", "l4", "l5"),
                CallContext.NO_DEADLINE, 0);
        PoolRequest<String, String> small = queue.admit(List.of("s0"), CallContext.NO_DEADLINE, 0);
        PoolRequest<String, String> pair = queue.admit(List.of("p0", "p1"), CallContext.NO_DEADLINE, 0);

        List<String> order = new java.util.ArrayList<>();
        InputTask<String, String> task;
        while ((task = queue.poll()) != null) {
            assertTrue(queue.claim(task));
            order.add(task.request().input(task.index()));
        }

        assertEquals(List.of("l0", "s0", "p0", "l1", "p1", "l2", "l3", "l4", "l5"), order);
        assertEquals(0, queue.queuedInputs());
        assertFalse(large.isDone() || small.isDone() || pair.isDone(), "taking is not answering");
    }

    /**
     * A stop signal comes after every input queued when it was given, also the inputs of a request that was taking
     * turns: shutting down lets the predictors finish what was admitted before they stop.
     */
    @Test
    void stopSignalsComeAfterEveryQueuedInputEvenOfARequestTakingTurns() {
        queue.admit(List.of("l0", "l1", "l2"), CallContext.NO_DEADLINE, 0);
        InputTask<String, String> first = queue.poll();
        assertTrue(queue.claim(first)); // l0 taken: the request is back in the queue for its next turn
        queue.addStops(1);

        List<String> rest = new java.util.ArrayList<>();
        InputTask<String, String> task;
        while ((task = queue.poll()) != null && !task.isStop()) {
            assertTrue(queue.claim(task));
            rest.add(task.request().input(task.index()));
        }

        assertEquals(List.of("l1", "l2"), rest);
        assertTrue(task != null && task.isStop(), "then the stop");
        assertEquals(null, queue.poll());
    }

    /**
     * A spinning taker never sleeps while its spin lasts, and takes what comes: were the spin ignored, it would be
     * parked (WAITING) within microseconds, long before the thousands of looks below end.
     */
    @Test
    void aSpinningTakerStaysAwakeAndTakesWhatArrives() throws Exception {
        Taker taker = start(AN_HOUR);
        taker.entered.await();
        for (int look = 0; look < 5_000; look++) {
            assertNotEquals(Thread.State.WAITING, taker.thread.getState(), "parked while spinning, look " + look);
            Thread.yield();
        }
        PoolRequest<String, String> request = queue.admit(List.of("late"), CallContext.NO_DEADLINE, 0);
        assertSame(request, taker.taken.get(10, TimeUnit.SECONDS).request());
    }

    /** One taker spins at a time: a second one sleeps at once, and both take what comes. */
    @Test
    void aSecondTakerSleepsWhileOneSpins() throws Exception {
        Taker first = start(AN_HOUR);
        Taker second = start(AN_HOUR);
        first.entered.await();
        second.entered.await();
        Taker sleeper = awaitEitherWaiting(first, second);
        Taker spinner = sleeper == first ? second : first;
        for (int look = 0; look < 5_000; look++) {
            assertNotEquals(Thread.State.WAITING, spinner.thread.getState(), "both parked, look " + look);
            Thread.yield();
        }
        queue.admit(List.of("a", "b"), CallContext.NO_DEADLINE, 0);
        assertEquals(java.util.Set.of(0, 1), java.util.Set.of(first.taken.get(10, TimeUnit.SECONDS).index(),
                second.taken.get(10, TimeUnit.SECONDS).index()));
    }

    /**
     * The lost wake-up: a task queued after a taker found the queue empty and before it registered to sleep wakes
     * nobody (there is no sleeper yet), so the taker must look again once registered. Placed exactly there by a
     * sleepers queue that queues the task when the taker registers: without that look the taker parks for good.
     */
    @Test
    void aTaskQueuedBetweenTheLastLookAndTheSleepIsTaken() throws Exception {
        CompletableFuture<PoolRequest<String, String>> queuedInBetween = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicReference<InputQueue<String, String>> late =
                new java.util.concurrent.atomic.AtomicReference<>();
        late.set(new InputQueue<>("d", 16, RetryAfter.servicePaced(1), new java.util.concurrent
                .ConcurrentLinkedQueue<>() {
            @Override
            public boolean add(Thread sleeper) {
                if (!queuedInBetween.isDone()) {
                    // wakes nobody: no sleeper yet
                    queuedInBetween.complete(late.get().admit(List.of("between"), CallContext.NO_DEADLINE, 0));
                }
                return super.add(sleeper);
            }
        }));
        CompletableFuture<InputTask<String, String>> taken = new CompletableFuture<>();
        Thread taker = Thread.ofPlatform().daemon().start(() -> {
            try {
                taken.complete(late.get().take(0));
            } catch (Throwable e) {
                taken.completeExceptionally(e);
            }
        });
        try {
            assertSame(queuedInBetween.get(10, TimeUnit.SECONDS), taken.get(10, TimeUnit.SECONDS).request(),
                    "the task queued while the taker went to sleep");
        } finally {
            taker.interrupt();
        }
    }

    /** Once its spin is over the taker sleeps in the queue, and a task queued then still wakes it. */
    @Test
    void afterTheSpinTheTakerSleepsAndIsWokenByWork() throws Exception {
        for (long spin : new long[] {0, Duration.ofMillis(1).toNanos()}) {
            Taker taker = start(spin);
            awaitState(taker.thread, Thread.State.WAITING);
            assertFalse(taker.taken.isDone());
            PoolRequest<String, String> request = queue.admit(List.of("x"), CallContext.NO_DEADLINE, 0);
            assertSame(request, taker.taken.get(10, TimeUnit.SECONDS).request(), "spin " + spin);
        }
    }

    @Test
    void anInterruptEndsTheSpin() throws Exception {
        Taker taker = start(AN_HOUR);
        taker.entered.await();
        taker.thread.interrupt();
        taker.thread.join(Duration.ofSeconds(10));
        assertFalse(taker.thread.isAlive());
        assertTrue(taker.interrupted);
    }

    @Test
    void aStopSignalEndsTheSpinLikeAnyTask() throws Exception {
        Taker taker = start(AN_HOUR);
        taker.entered.await();
        queue.addStops(1);
        assertTrue(taker.taken.get(10, TimeUnit.SECONDS).isStop());
    }

    /**
     * Real threads, many interleavings: producers queue requests of 1 to 4 inputs while predictors take them, some
     * spinning and some not, sleeping and waking all along. Every input is taken exactly once and none is left
     * queued while the predictors sleep (a stranded one would keep its predictor from ever seeing the stop signal).
     */
    @Test
    void everyInputIsTakenOnceAndNoneIsStranded() throws Exception {
        InputQueue<Integer, String> shared = new InputQueue<>("d", 1_000_000, RetryAfter.servicePaced(1));
        int producers = 3;
        int requestsEach = 20_000;
        java.util.concurrent.ConcurrentHashMap<InputTask<Integer, String>, Boolean> seen =
                new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicInteger duplicates = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger inputs = new java.util.concurrent.atomic.AtomicInteger();
        List<Thread> predictors = new java.util.ArrayList<>();
        for (int p = 0; p < 3; p++) {
            long spin = p == 0 ? 0 : 50_000L * p;
            predictors.add(Thread.ofPlatform().name("predictor-" + p).daemon().start(() -> {
                try {
                    for (;;) {
                        InputTask<Integer, String> task = shared.take(spin);
                        if (task.isStop()) {
                            return;
                        }
                        if (shared.claim(task) && seen.put(task, true) != null) { // a task is its request and index
                            duplicates.incrementAndGet();
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        List<Thread> callers = new java.util.ArrayList<>();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(producers);
        for (int c = 0; c < producers; c++) {
            int seed = c;
            callers.add(Thread.ofPlatform().name("caller-" + c).start(() -> {
                java.util.Random random = new java.util.Random(seed);
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int r = 0; r < requestsEach; r++) {
                    int n = 1 + random.nextInt(4);
                    inputs.addAndGet(n);
                    shared.admit(java.util.Collections.nCopies(n, r), CallContext.NO_DEADLINE, 0);
                    if (random.nextInt(8) == 0) {
                        Thread.yield(); // now and then the predictors drain the queue and go back to sleep
                    }
                }
            }));
        }
        for (Thread caller : callers) {
            caller.join(Duration.ofSeconds(60));
        }
        // Before any stop signal (which wakes every predictor): a task stranded while all of them sleep stays queued.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (shared.queuedInputs() > 0) {
            assertTrue(System.nanoTime() < deadline, shared.queuedInputs() + " inputs stranded in the queue");
            Thread.onSpinWait(); // waits on the predictors' progress: there is nothing to be notified by
        }
        shared.addStops(predictors.size());
        for (Thread predictor : predictors) {
            predictor.join(Duration.ofSeconds(60));
            assertFalse(predictor.isAlive(), predictor.getName() + " never saw its stop signal: a task was stranded");
        }
        assertEquals(0, duplicates.get());
        assertEquals(inputs.get(), seen.size());
        assertEquals(0, shared.queuedInputs());
    }

    private Taker start(long spinNanos) {
        Taker taker = Taker.start(queue, spinNanos);
        takers.add(taker);
        return taker;
    }

    private static Taker awaitEitherWaiting(Taker one, Taker other) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (;;) {
            if (one.thread.getState() == Thread.State.WAITING) {
                return one;
            }
            if (other.thread.getState() == Thread.State.WAITING) {
                return other;
            }
            assertTrue(System.nanoTime() < deadline, "neither taker sleeps: both spin");
            Thread.onSpinWait();
        }
    }

    private static void awaitState(Thread thread, Thread.State state) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread.getState() != state) {
            assertTrue(System.nanoTime() < deadline, thread.getName() + " never reached " + state);
            Thread.onSpinWait(); // waits on the thread's own state: there is nothing to be notified by
        }
    }

    /** A thread taking one task with a given spin. */
    private static final class Taker {
        final CountDownLatch entered = new CountDownLatch(1);
        final CompletableFuture<InputTask<String, String>> taken = new CompletableFuture<>();
        volatile boolean interrupted;
        Thread thread;

        static Taker start(InputQueue<String, String> queue, long spinNanos) {
            Taker taker = new Taker();
            taker.thread = Thread.ofPlatform().name("taker").daemon().start(() -> {
                taker.entered.countDown();
                try {
                    taker.taken.complete(queue.take(spinNanos));
                } catch (InterruptedException e) {
                    taker.interrupted = true;
                }
            });
            return taker;
        }
    }
}
