package dev.serval.replica;

import static dev.serval.request.CallContext.NO_DEADLINE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.deployment.FakeModel;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InferenceFailed;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.error.Overloaded;
import dev.serval.metrics.DeploymentMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntToLongFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A replica's predictor pool on its own: admission to its input queue, outputs in order from every predictor, how
 * batches form (with a {@link FakeModel} that batches), failures inside a batch, requests that end early, and close.
 * The batch policy's arithmetic is {@code BatchPolicyTest}'s; here real predictor threads act on it.
 */
class PredictorPoolTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<PredictorPool<String, String>> pools = new ArrayList<>();

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        for (PredictorPool<String, String> pool : pools) {
            assertTrue(pool.close(Duration.ofSeconds(WAIT_SECONDS), Duration.ofSeconds(1)), "every predictor exited");
        }
    }

    /**
     * A started pool of {@code threads} predictors taking up to {@code maxQueuedInputs} queued inputs, batches of up to
     * 32 (when the model batches) and waiting up to {@code batchWait} for company; its meters go to {@link #registry}.
     */
    private PredictorPool<String, String> started(int threads, int maxQueuedInputs, Duration batchWait)
            throws Exception {
        PredictorPool<String, String> pool = new PredictorPool<>("fake", "fake#0", threads, maxQueuedInputs, 32, model,
                Thread.ofPlatform().daemon(true).name("serval-fake-r0-", 0).factory(), System::nanoTime,
                DeploymentMetrics.create(registry, "fake"));
        pool.tune(32, batchWait, Duration.ZERO);
        pools.add(pool);
        pool.start();
        pool.awaitWarmUp();
        return pool;
    }

    private PredictorPool<String, String> started(int threads) throws Exception {
        return started(threads, 80, Duration.ZERO);
    }

    @Test
    void returnsOutputsInInputOrderFromAllPredictors() throws Exception {
        PredictorPool<String, String> pool = started(2, 800, Duration.ZERO);
        List<String> inputs = IntStream.range(0, 50).mapToObj(i -> "text-" + i).toList();

        List<String> outputs = pool.submit(inputs, NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(inputs.stream().map(String::toUpperCase).toList(), outputs);
        assertEquals(0, pool.queuedInputs());
        assertTrue(model.threads.stream().allMatch(name -> name.startsWith("serval-fake-")), model.threads.toString());
    }

    @Test
    void warmsEveryPredictorUpBeforeBecomingReady() throws Exception {
        started(3);
        assertEquals(3, model.predictions.get(), "one probe per predictor");
        assertEquals(3, model.openPredictors.get());
    }

    @Test
    void refusesARequestWhoseInputsDoNotAllFitWholeWithARetryAfter() throws Exception {
        PredictorPool<String, String> pool = started(1, 3, Duration.ZERO);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = pool.submit(List.of("a", "b"), NO_DEADLINE);

        Overloaded refused = assertThrows(Overloaded.class, () -> pool.submit(List.of("c", "d"), NO_DEADLINE));

        assertEquals("model 'fake' is overloaded: 2 inputs queued, 2 more would exceed max-queued-inputs 3",
                refused.getMessage());
        assertTrue(refused.retryAfter().compareTo(Duration.ofMillis(1)) >= 0
                && refused.retryAfter().compareTo(Duration.ofSeconds(60)) <= 0, refused.retryAfter().toString());
        assertEquals(2, pool.queuedInputs(), "nothing of the refused request was queued");
        CompletableFuture<List<String>> fits = pool.submit(List.of("e"), NO_DEADLINE); // the third place is still free
        model.gate.release();
        assertEquals(List.of("A", "B"), queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("E"), fits.get(WAIT_SECONDS, TimeUnit.SECONDS));
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void failsTheRequestWithInferenceFailedWhenTheModelThrows() throws Exception {
        PredictorPool<String, String> pool = started(2);

        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> pool.submit(List.of("fine", "boom"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertInstanceOf(InferenceFailed.class, failure.getCause());
        assertEquals(List.of("STILL SERVING"), pool.submit(List.of("still serving"), NO_DEADLINE)
                .get(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    @Test
    void anInputTheModelRejectsInsideABatchFailsAloneAsInvalidInputAndTheRestOfTheBatchIsAnswered() throws Exception {
        model.batches = true;
        PredictorPool<String, String> pool = started(1);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> before = pool.submit(List.of("a"), NO_DEADLINE);
        CompletableFuture<List<String>> rejected = pool.submit(List.of("reject"), NO_DEADLINE);
        CompletableFuture<List<String>> after = pool.submit(List.of("c", "d"), NO_DEADLINE);
        model.batchSizes.clear();

        model.gate.release(); // the predictor comes back to four queued inputs and takes them as one batch

        assertEquals(List.of("A"), before.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("C", "D"), after.get(WAIT_SECONDS, TimeUnit.SECONDS));
        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> rejected.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(InvalidInput.class, failure.getCause(), "a client error (400), not a server failure");
        assertEquals("text 'reject' is refused by the model", failure.getCause().getMessage());
        assertEquals(4, model.batchSizes.getFirst(), "the four inputs did run as one batch: " + model.batchSizes);
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void anInputThatCrashesABatchFailsAloneAndTheRestOfTheBatchIsAnswered() throws Exception {
        model.batches = true;
        PredictorPool<String, String> pool = started(1);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> fine = pool.submit(List.of("a"), NO_DEADLINE);
        CompletableFuture<List<String>> crashing = pool.submit(List.of("boom"), NO_DEADLINE);

        model.gate.release();

        assertEquals(List.of("A"), fine.get(WAIT_SECONDS, TimeUnit.SECONDS));
        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> crashing.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(InferenceFailed.class, failure.getCause());
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aCancelledRequestGivesBackItsPredictorQueuePlacesAndItsInputsAtOnce() throws Exception {
        PredictorPool<String, String> pool = started(1);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        Submitted submitted = submitPayload(pool, 3);
        assertEquals(3, pool.queuedInputs());

        submitted.result.cancel(false);

        assertEquals(0, pool.queuedInputs(), "the predictor queue gave its places back at once");
        assertUnreachable(submitted.inputs);
        model.gate.release();
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private record Submitted(CompletableFuture<List<String>> result, WeakReference<List<String>> inputs) {
    }

    /** Submits {@code count} inputs that only the pool holds, so their reachability shows what the pool keeps. */
    private static Submitted submitPayload(PredictorPool<String, String> pool, int count) {
        List<String> inputs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            inputs.add("x".repeat(1 << 16));
        }
        return new Submitted(pool.submit(inputs, NO_DEADLINE), new WeakReference<>(inputs));
    }

    private static void assertUnreachable(WeakReference<?> reference) {
        for (int i = 0; i < 20 && reference.get() != null; i++) {
            System.gc();
        }
        assertTrue(reference.get() == null, "the inputs are still referenced");
    }

    @Test
    void skipsTheQueuedInputsOfACancelledRequest() throws Exception {
        PredictorPool<String, String> pool = started(1);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        int before = model.predictions.get();
        CompletableFuture<List<String>> cancelled = pool.submit(List.of("a", "b", "c"), NO_DEADLINE);

        cancelled.cancel(false);
        model.gate.release();
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
        pool.submit(List.of("after"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(before + 2, model.predictions.get(), "only 'wait' and 'after' ran");
        assertEquals(0, pool.queuedInputs());
    }

    @Test
    void aRequestFailedByItsCallerBeforeAPredictorTookItNeverReachesThePredictor() throws Exception {
        PredictorPool<String, String> pool = started(1);
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        int before = model.predictions.get();
        CompletableFuture<List<String>> expired = pool.submit(List.of("a", "b"), NO_DEADLINE);

        expired.completeExceptionally(new DeadlineExceeded("deadline passed"));
        model.gate.release();
        blocker.get(WAIT_SECONDS, TimeUnit.SECONDS);
        pool.submit(List.of("after"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS);

        assertEquals(before + 2, model.predictions.get(), "only 'wait' and 'after' reached the predictor");
    }

    @Test
    void closeFailsWhatIsStillQueuedAfterTheDrainTimeout() throws Exception {
        PredictorPool<String, String> pool = started(1);
        pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> queued = pool.submit(List.of("never runs"), NO_DEADLINE);

        pool.close(Duration.ofMillis(50), Duration.ofSeconds(1));

        ExecutionException failure = assertThrows(ExecutionException.class,
                () -> queued.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(NotReady.class, failure.getCause());
        assertEquals(0, pool.queuedInputs());
    }

    @Test
    void anIdleReplicaNeverWaitsForABatchEvenWithALongBatchWait() throws Exception {
        model.batches = true;
        PredictorPool<String, String> pool = started(2, 80, Duration.ofSeconds(1));

        assertEquals(List.of("LONE"), pool.submit(List.of("lone"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertNull(registry.find("serval.batch.wait").timer(), "no predictor waited: the replica was idle");
    }

    @Test
    void aPredictorWaitsForAFullerBatchWhileAnotherIsBusyAndABacklogIsQueued() throws Exception {
        model.batches = true;
        PredictorPool<String, String> pool = started(2, 80, Duration.ofSeconds(1));
        CompletableFuture<List<String>> busy1 = pool.submit(List.of("wait1"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> busy2 = pool.submit(List.of("wait2"), NO_DEADLINE);
        model.awaitWaiting(2);
        // both predictors busy
        CompletableFuture<List<String>> backlog = pool.submit(List.of("a", "b", "c"), NO_DEADLINE);
        model.gate.release(); // one predictor comes back to three queued inputs: more than its fair share of two

        TimeUnit.MILLISECONDS.sleep(100); // within the 1 s batch wait: it holds a, b and c for company
        assertFalse(backlog.isDone(), "with a backlog, the free predictor waits for a fuller batch while the other is busy");
        CompletableFuture<List<String>> late = pool.submit(List.of("d"), NO_DEADLINE);

        assertEquals(List.of("A", "B", "C"), backlog.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("D"), late.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(model.batchSizes.contains(4), "a, b, c and the late d ran as one batch: " + model.batchSizes);
        model.gate.release();
        busy1.get(WAIT_SECONDS, TimeUnit.SECONDS);
        busy2.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aPredictorWhoseTakeEmptiedTheQueueRunsAtOnceEvenWhileAnotherIsBusy() throws Exception {
        model.batches = true;
        PredictorPool<String, String> pool = started(2, 80, Duration.ofSeconds(1));
        CompletableFuture<List<String>> busy = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);

        assertEquals(List.of("FIRST"), pool.submit(List.of("first"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertNull(registry.find("serval.batch.wait").timer(),
                "no backlog: the free predictor ran its lone input without waiting for company");
        model.gate.release();
        busy.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * One predictor on a manual clock that the model advances by a scripted cost per text for each batch size: a
     * backlog of {@code rounds} requests of 64 texts, each queued whole. Returns the outputs, in order.
     */
    private List<List<String>> underBacklog(PredictorPool<String, String> pool, int rounds) throws Exception {
        List<List<String>> answers = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            int first = round * 64;
            answers.add(pool.submit(IntStream.range(first, first + 64).mapToObj(i -> "t" + i).toList(), NO_DEADLINE)
                    .get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        return answers;
    }

    /** The size of every inference of a {@link #scripted} pool, in order (the probe's included). */
    private final List<Integer> sizes = new CopyOnWriteArrayList<>();

    /** A pool of one predictor whose clock only the model moves: {@code nanosPerText} for each batch size. */
    private PredictorPool<String, String> scripted(IntToLongFunction nanosPerText) throws Exception {
        AtomicLong clock = new AtomicLong();
        model.batches = true;
        model.inferences = size -> {
            sizes.add(size);
            clock.addAndGet(size * nanosPerText.applyAsLong(size));
        };
        PredictorPool<String, String> pool = new PredictorPool<>("fake", "fake#0", 1, 800, 32, model,
                Thread.ofPlatform().daemon(true).name("serval-fake-r0-", 0).factory(), clock::get,
                DeploymentMetrics.create(registry, "fake"));
        pool.tune(32, Duration.ZERO, Duration.ZERO);
        pools.add(pool);
        pool.start();
        pool.awaitWarmUp();
        return pool;
    }

    @Test
    void underABacklogBatchesConvergeOnTheSizeCheapestPerTextAndAnswersDoNotChange() throws Exception {
        // dearer alone, cheapest from 8 to 15 texts, dearer again past them (activations out of the caches)
        PredictorPool<String, String> pool = scripted(size -> size == 1 ? 5_000 : size < 8 ? 4_500
                : size < 16 ? 3_000 : 4_000);

        List<List<String>> answers = underBacklog(pool, 120);

        for (int round = 0; round < answers.size(); round++) {
            int first = round * 64;
            assertEquals(IntStream.range(first, first + 64).mapToObj(i -> "T" + i).toList(), answers.get(round));
        }
        List<Integer> late = sizes.subList(sizes.size() / 2, sizes.size());
        assertTrue(late.stream().filter(size -> size == 15).count() > late.size() / 2,
                "the class 8-15 costs least per text: " + late);
        assertTrue(sizes.stream().allMatch(size -> size <= 32), "max_batch_size stays the bound");
    }

    @Test
    void aProbeThatFoundBatchingDoesNotPayIsOverruledByWhatBatchesCostUnderLoad() throws Exception {
        model.preferredBatch = 1; // a noisy second at load said batch 1
        PredictorPool<String, String> pool = scripted(size -> size < 16 ? 5_000 : 3_000);

        underBacklog(pool, 120);

        assertEquals(List.of(1, 1, 1), sizes.subList(1, 4), "it starts where the probe left it: " + sizes);
        List<Integer> late = sizes.subList(sizes.size() / 2, sizes.size());
        assertTrue(late.stream().filter(size -> size >= 16).count() > late.size() / 2,
                "larger batches measured cheaper: " + late);
    }

    @Test
    void aLoneRequestRunsAloneAtOnceWhateverSizeWasChosen() throws Exception {
        PredictorPool<String, String> pool = scripted(size -> size == 1 ? 5_000 : 1_000);
        underBacklog(pool, 40);
        sizes.clear();
        long waitsBefore = batchWaits();

        assertEquals(List.of("LONE"), pool.submit(List.of("lone"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertEquals(List.of(1), sizes, "it ran as a batch of one");
        assertEquals(waitsBefore, batchWaits(), "and never waited for company");
    }

    @Test
    void aLoneInferenceRunsOnTheIdleReplicasCoresAndTheNextWaitsForIt() throws Exception {
        model.widens = true;
        PredictorPool<String, String> pool = started(2);
        assertEquals(List.of("probe", "probe"), model.widened, "each predictor warmed the wide session up once");
        model.widened.clear();

        CompletableFuture<List<String>> alone = pool.submit(List.of("wait-alone"), NO_DEADLINE);
        model.awaitWaiting(1);
        CompletableFuture<List<String>> next = pool.submit(List.of("next"), NO_DEADLINE);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (pool.waitingForCores() == 0) { // the second predictor took it and waits for the cores
            assertFalse(next.isDone(), "ran on a core the lone inference was using");
            assertTrue(System.nanoTime() < deadline, "the second predictor never waited for the cores");
            Thread.yield();
        }
        assertFalse(next.isDone(), "ran on a core the lone inference was using");

        model.gate.release();

        assertEquals(List.of("WAIT-ALONE"), alone.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("NEXT"), next.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals("wait-alone", model.widened.getFirst());
        assertFalse(model.wideOverlap);
        assertEquals(model.widened.size(), registry.get("serval.inferences.widened").counter().count(),
                "every widened request inference counted, the warm-up probes not");
    }

    @Test
    void aLoneInferenceIsSizedByItsOwnInputsNotThePreviousBatchs() throws Exception {
        model.widens = true;
        PredictorPool<String, String> pool = started(2);
        model.sized.clear();

        assertEquals(List.of("A"), pool.submit(List.of("a"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("LONGER"), pool.submit(List.of("longer"), NO_DEADLINE).get(WAIT_SECONDS,
                TimeUnit.SECONDS));

        assertEquals(List.of("a", "longer"), model.sized, "each lone inference weighed its own input");
    }

    @Test
    void aWidenedInferenceNeverRunsBesideAnotherUnderConcurrentLoad() throws Exception {
        model.widens = true;
        PredictorPool<String, String> pool = started(2, 800, Duration.ZERO);
        List<CompletableFuture<List<String>>> answers = new ArrayList<>();
        List<Thread> clients = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            int client = c;
            clients.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 200; i++) {
                    CompletableFuture<List<String>> answer = pool.submit(List.of("c" + client + "-" + i), NO_DEADLINE);
                    synchronized (answers) {
                        answers.add(answer);
                    }
                    if (i % 3 == 0) {
                        answer.join(); // gaps, so that some inferences find the replica idle
                    }
                }
            }));
        }
        for (Thread client : clients) {
            client.join();
        }
        for (CompletableFuture<List<String>> answer : answers) {
            assertEquals(1, answer.get(WAIT_SECONDS, TimeUnit.SECONDS).size());
        }

        assertEquals(800, answers.size());
        assertFalse(model.wideOverlap, "a widened inference ran beside another one");
        assertEquals(0, pool.waitingForCores());
    }

    @Test
    void aModelWithoutAWideSessionIsNeverWidened() throws Exception {
        PredictorPool<String, String> pool = started(2);

        assertEquals(List.of("A"), pool.submit(List.of("a"), NO_DEADLINE).get(WAIT_SECONDS, TimeUnit.SECONDS));

        assertEquals(List.of(), model.widened);
        assertEquals(0, pool.waitingForCores());
    }

    /** Batch waits recorded so far: 0 while the meter is not registered (it registers with its first wait). */
    private long batchWaits() {
        Timer waits = registry.find("serval.batch.wait").timer();
        return waits == null ? 0 : waits.count();
    }
}
