package dev.serval.batching;

import java.time.Duration;

/**
 * How many queued inputs a free predictor takes for one inference, and when and how long it waits for more: the batch
 * policy of a replica's predictors. Immutable and pure (no clock, no queue, no thread of its own): the predictor pool
 * asks it with what it sees and acts on the answers, so every decision is testable with plain numbers.
 *
 * <p>The policy, in order:
 * <ol>
 *   <li>A model that does not batch ({@code batched} false: its rows are coupled, so a batch would change the
 *       answers, see {@code docs/design-decisions.md}) runs one input per inference, always: {@link #maxBatch()} is 1
 *       and it never waits.</li>
 *   <li>A predictor takes at once its fair share of the queue ({@link #share}): the inputs queued divided by the
 *       replica's predictors, rounded up, at least 1 and at most {@link #maxBatch()}; so predictors split a full queue
 *       instead of one taking it all. For each take the bound is first lowered to the size whose measured cost per
 *       text under load is lowest ({@link #limitedTo} with {@link BatchCosts#target}; {@code max_batch_size} stays the
 *       upper bound); only inferences under backlog are measured ({@link #measures}).</li>
 *   <li>It then waits for company ({@link #waitsForCompany}) only while all of these hold: a wait is set
 *       ({@code batch_wait_timeout} above 0), its batch is not empty and not full, another predictor of the replica is
 *       busy, and inputs are still queued (a backlog: the replica is not keeping up). An idle replica never waits, so
 *       a lone input runs at once; nor does a predictor whose take emptied the queue, since waiting then only adds
 *       latency and idles a core while batches form by themselves once inputs queue up.</li>
 *   <li>While it waits it may take more, until the batch is full or {@link #waitNanos()} after it began
 *       ({@link #waitLeft}).</li>
 * </ol>
 * Inputs run in the order they were queued; grouping them by length inside a batch is the model's business (a text
 * model sorts by token count and pads each group separately).
 *
 * @param predictors the replica's predictor threads
 * @param maxBatch   inputs one inference may take: {@code max_batch_size} for a model that batches, else 1
 * @param waitNanos  the longest wait for company ({@code batch_wait_timeout}), 0 for none
 */
public record BatchPolicy(int predictors, int maxBatch, long waitNanos) {

    public BatchPolicy {
        if (predictors < 1) {
            throw new IllegalArgumentException("predictors must be >= 1, was " + predictors);
        }
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be >= 1, was " + maxBatch);
        }
        if (waitNanos < 0) {
            throw new IllegalArgumentException("waitNanos must be >= 0, was " + waitNanos);
        }
    }

    /**
     * The policy for a replica of {@code predictors} predictors.
     *
     * @param batched      whether the model batches ({@code model.batching().batched()}); when not, one input per
     *                     inference whatever {@code maxBatchSize} says
     * @param maxBatchSize the deployment's {@code max_batch_size}
     * @param wait         the deployment's {@code batch_wait_timeout}
     */
    public static BatchPolicy of(boolean batched, int predictors, int maxBatchSize, Duration wait) {
        return new BatchPolicy(predictors, batched ? maxBatchSize : 1, wait.toNanos());
    }

    /**
     * How many inputs a predictor takes without waiting: its fair share of the {@code queued} inputs left in the queue
     * plus the {@code taken} it holds already, rounded up, from 1 to {@link #maxBatch()}.
     */
    public int share(int queued, int taken) {
        return (int) Math.max(1, Math.min(maxBatch, ((long) queued + taken + predictors - 1) / predictors));
    }

    /**
     * This policy with its batch bound lowered to {@code limit} for one take (the size {@link BatchCosts} chose):
     * {@code this} when that changes nothing; never above {@link #maxBatch()}, never below 1.
     */
    public BatchPolicy limitedTo(int limit) {
        int bound = Math.max(1, Math.min(maxBatch, limit));
        return bound == maxBatch ? this : new BatchPolicy(predictors, bound, waitNanos);
    }

    /**
     * Whether the inference of a take of {@code taken} inputs that left {@code queuedAfter} inputs queued measures the
     * cost of its batch size ({@link BatchCosts#record}): only under backlog, where the size matters and every
     * predictor is busy alike; a take that emptied the queue was sized by the load, and may have run on lent cores.
     */
    public static boolean measures(int taken, int queuedAfter) {
        return taken > 0 && queuedAfter > 0;
    }

    /**
     * Whether a predictor holding {@code taken} inputs waits for more, given the predictors of its replica that are
     * {@code busy} running an inference (never itself: it is forming its batch) and the inputs still {@code queued}.
     */
    public boolean waitsForCompany(int taken, int busy, int queued) {
        return waitNanos > 0 && taken > 0 && taken < maxBatch && busy > 0 && queued > 0;
    }

    /** When a wait for company that begins at {@code startNanos} ends. */
    public long waitDeadline(long startNanos) {
        return startNanos + waitNanos;
    }

    /**
     * How much longer a waiting predictor holding {@code taken} inputs may wait at {@code nowNanos} for a wait that
     * ends at {@code deadlineNanos}: 0 or less when its batch is full or the wait is over.
     */
    public long waitLeft(int taken, long deadlineNanos, long nowNanos) {
        return taken >= maxBatch ? 0 : deadlineNanos - nowNanos;
    }
}
