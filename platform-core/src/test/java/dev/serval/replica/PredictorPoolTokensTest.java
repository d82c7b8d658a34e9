package dev.serval.replica;

import static dev.serval.request.CallContext.NO_DEADLINE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.serval.deployment.FakeModel;
import dev.serval.error.InvalidInput;
import dev.serval.metrics.DeploymentMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A replica's predictor pool under token budgets ({@code max_batch_tokens}, {@code max_tokens_per_request}), with a
 * {@link FakeModel} whose inputs have one token per character (at most {@link FakeModel#maxInputTokens}): how a batch's
 * take stops at its budget, how a request past its budget is refused and its rest dropped, that each input is tokenised
 * once (its inference gets the count's tokenisation), and that nothing is counted where no budget can be passed. The
 * budgets' arithmetic is {@code TokenBudgetTest}'s.
 */
class PredictorPoolTokensTest {

    private static final long WAIT_SECONDS = 10;

    private final FakeModel model = new FakeModel();
    private final List<PredictorPool<String, String>> pools = new ArrayList<>();

    @AfterEach
    void closeAll() {
        model.gate.release(10_000);
        for (PredictorPool<String, String> pool : pools) {
            assertTrue(pool.close(Duration.ofSeconds(WAIT_SECONDS), Duration.ofSeconds(1)), "every predictor exited");
        }
    }

    /** A started pool of one predictor, batches of up to 32 when the model batches, with the budgets given. */
    private PredictorPool<String, String> started(int maxBatchTokens, int maxTokensPerRequest) throws Exception {
        PredictorPool<String, String> pool = new PredictorPool<>("fake", "fake#0", 1, 100, 32, model,
                Thread.ofPlatform().daemon(true).name("serval-fake-r0-", 0).factory(), System::nanoTime,
                DeploymentMetrics.create(new SimpleMeterRegistry(), "fake"));
        pool.tune(32, Duration.ZERO, Duration.ZERO);
        pool.budgetTokens(maxBatchTokens, maxTokensPerRequest);
        pools.add(pool);
        pool.start();
        pool.awaitWarmUp();
        return pool;
    }

    /** Holds the pool's one predictor on a {@code "wait"} input, so that what is submitted next queues. */
    private CompletableFuture<List<String>> holdThePredictor(PredictorPool<String, String> pool) {
        CompletableFuture<List<String>> blocker = pool.submit(List.of("wait"), NO_DEADLINE);
        model.awaitWaiting(1);
        model.tokenised.clear();
        model.ranCounted.clear();
        return blocker;
    }

    private static List<String> answer(CompletableFuture<List<String>> request) throws Exception {
        return request.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aBatchTakesQueuedInputsWhileTheirTokensStayWithinMaxBatchTokens() throws Exception {
        model.batches = true;
        model.maxInputTokens = 100;
        PredictorPool<String, String> pool = started(10, 1_000_000);
        CompletableFuture<List<String>> blocker = holdThePredictor(pool);
        List<CompletableFuture<List<String>>> requests = new ArrayList<>();
        for (String text : List.of("aa", "bb", "ccccccc", "dd")) { // 2, 2, 7 and 2 tokens
            requests.add(pool.submit(List.of(text), NO_DEADLINE));
        }
        model.batchSizes.clear();

        model.gate.release(); // the predictor comes back to four queued inputs: 2 + 2 + 7 passes 10

        assertEquals(List.of("AA"), answer(requests.get(0)));
        assertEquals(List.of("BB"), answer(requests.get(1)));
        assertEquals(List.of("CCCCCCC"), answer(requests.get(2)));
        assertEquals(List.of("DD"), answer(requests.get(3)));
        answer(blocker);
        assertEquals(List.of(2, 2), model.batchSizes, "aa + bb, then the input that did not fit with dd");
        assertEquals(List.of("aa", "bb", "ccccccc", "dd"), model.tokenised, "each input tokenised once");
        assertEquals(model.tokenised, model.ranCounted, "and run on that tokenisation");
    }

    @Test
    void anInputOverMaxBatchTokensRunsAloneAndTheInputsAroundItStillRun() throws Exception {
        model.batches = true;
        model.maxInputTokens = 100;
        PredictorPool<String, String> pool = started(5, 1_000_000);
        CompletableFuture<List<String>> blocker = holdThePredictor(pool);
        CompletableFuture<List<String>> request = pool.submit(List.of("aa", "cccccccc", "dd"), NO_DEADLINE);
        model.batchSizes.clear();

        model.gate.release();

        assertEquals(List.of("AA", "CCCCCCCC", "DD"), answer(request));
        answer(blocker);
        assertEquals(List.of(), model.batchSizes, "every input ran alone: none fits 5 tokens beside another");
        assertEquals(List.of("wait", "aa", "cccccccc", "dd"), model.reached.subList(model.reached.size() - 4,
                model.reached.size()));
    }

    @Test
    void aRequestPastMaxTokensPerRequestFailsNamingTheBudgetAndTheRestOfItNeverRuns() throws Exception {
        model.maxInputTokens = 100;
        PredictorPool<String, String> pool = started(16_384, 10);
        CompletableFuture<List<String>> blocker = holdThePredictor(pool);
        CompletableFuture<List<String>> request = pool.submit(List.of("aaaa", "bbbb", "cccc", "dddd", "eeee"),
                NO_DEADLINE);

        model.gate.release();

        ExecutionException failure = assertThrows(ExecutionException.class, () -> answer(request));
        InvalidInput refused = assertInstanceOf(InvalidInput.class, failure.getCause(), "a client error: 400");
        assertEquals("the request holds more tokens than the 10 model 'fake' reads per request "
                + "(max_tokens_per_request): 12 counted when it was stopped; the rest of it was not run",
                refused.getMessage());
        answer(blocker);
        assertEquals(List.of("aaaa", "bbbb", "cccc"), model.tokenised, "nothing counted past the budget");
        assertTrue(model.reached.stream().noneMatch(List.of("cccc", "dddd", "eeee")::contains),
                "nothing run past the budget: " + model.reached);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (pool.queuedInputs() > 0) { // its queue places are given back right after it fails
            assertTrue(System.nanoTime() < deadline, pool.queuedInputs() + " queue places never given back");
            Thread.yield();
        }
        assertEquals(List.of("NEXT"), answer(pool.submit(List.of("next"), NO_DEADLINE)));
    }

    @Test
    void nothingIsCountedWhereNoBudgetCanBePassed() throws Exception {
        model.batches = true;
        model.maxInputTokens = 100; // 32 inputs of 100 tokens: 3,200, within both budgets
        PredictorPool<String, String> pool = started(16_384, 262_144);
        CompletableFuture<List<String>> blocker = holdThePredictor(pool);
        CompletableFuture<List<String>> request = pool.submit(List.of("a", "b", "c", "d", "e", "f"), NO_DEADLINE);

        model.gate.release();

        assertEquals(List.of("A", "B", "C", "D", "E", "F"), answer(request));
        answer(blocker);
        assertEquals(List.of(), model.tokenised, "no text tokenised ahead of its inference");
    }

    @Test
    void aModelThatReadsNoTokensIgnoresTheBudgets() throws Exception {
        model.batches = true; // maxInputTokens stays 0
        PredictorPool<String, String> pool = started(1, 1);
        CompletableFuture<List<String>> blocker = holdThePredictor(pool);
        CompletableFuture<List<String>> request = pool.submit(List.of("aaaa", "bbbb", "cccc"), NO_DEADLINE);
        model.batchSizes.clear();

        model.gate.release();

        assertEquals(List.of("AAAA", "BBBB", "CCCC"), answer(request));
        answer(blocker);
        assertEquals(List.of(3), model.batchSizes);
        assertEquals(List.of(), model.tokenised);
    }
}
