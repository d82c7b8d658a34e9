package dev.serval.replica;

import dev.serval.batching.BatchPolicy;
import dev.serval.batching.TokenBudget;
import dev.serval.error.InvalidInput;
import dev.serval.error.NotReady;
import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.InputTokens;
import dev.serval.model.Predictor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One predictor's batches, formed from its replica's {@link InputQueue}: how many inputs to take and whether to wait
 * for more is the {@link BatchPolicy}'s answer, how many tokens they may hold the {@link TokenBudget}'s.
 *
 * <p>Tokens. Where a budget could be passed ({@link TokenBudget#countsBatches}, {@link PoolRequest#countsTokens}), each
 * claimed input is tokenised by this former's predictor ({@link Predictor#tokens}), and the task carries that
 * tokenisation to the input's inference, so an input is tokenised once. Its request is charged the count
 * ({@link PoolRequest#charge}): past {@code max_tokens_per_request} the request fails and the input is dropped. An
 * input that would pass {@code max_batch_tokens} ends the batch and is carried over to start this predictor's next one
 * ({@link #carried}): an input alone always runs.
 *
 * <p>Threads: created, used and dropped by one predictor thread; every field is that thread's. The policy and budget
 * are read once per batch, after its first input came.
 */
final class BatchFormer<I, O> {

    private final String deployment;
    private final InputQueue<I, O> queue;
    private final Predictor<I, O> predictor;
    /** The pool's batch policy and token budget as they are now (replaced at run time). */
    private final Supplier<BatchPolicy> policy;
    private final Supplier<TokenBudget> budget;
    /** Predictors of the replica running an inference now. */
    private final IntSupplier busy;
    private final LongSupplier nanoTime;
    private final DeploymentMetrics metrics;
    /** The batch being formed; handed to the caller, who may remove from it. */
    private final List<InputTask<I, O>> tasks = new ArrayList<>();
    /** Tokens of the counted tasks in {@link #tasks}. */
    private long tokens;
    /** The task that did not fit the previous batch's token budget and starts the next, or null. */
    private InputTask<I, O> carried;
    /** Whether a stop signal was taken: the predictor exits once the batch formed and any carried task ran. */
    private boolean stopAfter;

    BatchFormer(String deployment, InputQueue<I, O> queue, Predictor<I, O> predictor, Supplier<BatchPolicy> policy,
            Supplier<TokenBudget> budget, IntSupplier busy, LongSupplier nanoTime, DeploymentMetrics metrics) {
        this.deployment = deployment;
        this.queue = queue;
        this.predictor = predictor;
        this.policy = policy;
        this.budget = budget;
        this.busy = busy;
        this.nanoTime = nanoTime;
        this.metrics = metrics;
    }

    /**
     * The next batch: the task carried over, or else the next queued one (waiting for it, spinning up to
     * {@code idleSpinNanos} first), then filled as the policy and the budget say (read once it has its first task).
     * Tasks whose requests ended while it formed are left out, so it may be empty.
     *
     * @return the batch, this former's list; null when the predictor is to exit (a stop signal, or interrupted)
     */
    List<InputTask<I, O>> next(long idleSpinNanos) {
        tasks.clear();
        tokens = 0;
        InputTask<I, O> first = null;
        if (carried != null) { // counted already: it starts this batch as it is
            tasks.add(carried);
            tokens = carried.tokens().count();
            carried = null;
        } else {
            if (stopAfter) {
                return null;
            }
            InputTask<I, O> task;
            try {
                task = queue.take(idleSpinNanos);
            } catch (InterruptedException e) {
                return null;
            }
            if (task.isStop()) {
                return null;
            }
            first = queue.claim(task) ? task : null;
        }
        BatchPolicy batching = policy.get();
        TokenBudget tokenBudget = budget.get();
        boolean countBatch = tokenBudget.countsBatches(batching.maxBatch());
        if (first != null) {
            add(first, tokenBudget, countBatch);
        }
        if (!stopAfter) {
            stopAfter = fill(batching, tokenBudget, countBatch);
        }
        tasks.removeIf(taken -> taken.request().isDone()); // expired or cancelled while the batch formed
        return tasks;
    }

    /** Fails the request of the task carried over, if any: the pool stopped before it ran. */
    void abandon() {
        if (carried != null) {
            carried.request().fail(new NotReady("model '" + deployment + "' shut down before running this request"));
            carried = null;
        }
    }

    /**
     * Fills the batch as the {@link BatchPolicy} says: first, without waiting, up to this predictor's fair share of the
     * queue; then, only while the policy says to wait for company (another predictor busy, a backlog queued, the batch
     * not full), more as they come, until the batch is full or the wait is over. A task whose tokens do not fit the
     * batch's token budget ends the batch ({@link #add}).
     *
     * @return whether a stop signal was taken
     */
    private boolean fill(BatchPolicy batching, TokenBudget budget, boolean countBatch) {
        int share = batching.share(queue.queuedInputs(), tasks.size());
        while (tasks.size() < share) {
            InputTask<I, O> next = queue.poll();
            if (next == null) {
                break;
            }
            if (next.isStop()) {
                return true;
            }
            if (queue.claim(next) && !add(next, budget, countBatch)) {
                return false;
            }
        }
        if (!batching.waitsForCompany(tasks.size(), busy.getAsInt(), queue.queuedInputs())) {
            return false;
        }
        long start = nanoTime.getAsLong();
        long waitUntil = batching.waitDeadline(start);
        try {
            for (;;) {
                long left = batching.waitLeft(tasks.size(), waitUntil, nanoTime.getAsLong());
                if (left <= 0) {
                    return false;
                }
                InputTask<I, O> next = queue.poll(left);
                if (next == null) {
                    return false;
                }
                if (next.isStop()) {
                    return true;
                }
                if (queue.claim(next) && !add(next, budget, countBatch)) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            metrics.batchWait(Math.min(nanoTime.getAsLong(), waitUntil) - start);
        }
    }

    /**
     * Adds a claimed task to the batch, first counting its input's tokens when a budget needs them: a request past its
     * budget fails with its 400 and the input is dropped, and so is one whose tokenising shows input the model cannot
     * take ({@link InvalidInput}).
     *
     * @return false when the input does not fit the batch's token budget: it is carried over, and the batch is complete
     */
    private boolean add(InputTask<I, O> task, TokenBudget budget, boolean countBatch) {
        PoolRequest<I, O> request = task.request();
        if (!countBatch && !request.countsTokens()) {
            tasks.add(task);
            return true;
        }
        I input = request.input(task.index());
        if (input == null) {
            return true; // its request ended: nothing to run
        }
        InputTokens counted;
        try {
            counted = predictor.tokens(input);
        } catch (InvalidInput refused) {
            request.fail(refused);
            return true;
        } catch (Exception e) {
            counted = null; // uncounted: its inference tokenises it again and fails as that fails
        }
        if (counted == null) {
            tasks.add(task);
            return true;
        }
        if (request.countsTokens() && !request.charge(counted.count(), deployment)) {
            return true;
        }
        InputTask<I, O> tokenised = task.withTokens(counted);
        if (countBatch && !budget.fits(tasks.size(), tokens, counted.count())) {
            carried = tokenised;
            return false;
        }
        tasks.add(tokenised);
        tokens += counted.count();
        return true;
    }
}
