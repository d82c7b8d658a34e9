package dev.serval.replica;

import dev.serval.admission.BoundedCount;
import dev.serval.error.DeadlineExceeded;
import dev.serval.error.InvalidInput;
import dev.serval.request.CallContext;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * One request in a {@link PredictorPool}: the caller's future, its inputs and its outputs, filled by any predictor.
 * Each of its inputs waits in the pool's {@link InputQueue} as one {@link InputTask}.
 *
 * <p>Design. Writers: each predictor that runs one of its inputs writes that output's slot and then decrements
 * {@code remaining}; the atomic decrement orders those writes before the last predictor's read, and that predictor
 * completes the future (on its own thread). {@code unclaimed} counts the tasks still holding a place in the queue's
 * {@link BoundedCount}: a predictor claims a task by decrementing it while positive ({@link #claimTask}); when the
 * request ends early (its caller cancelled it, it failed, its deadline passed) {@link #ended} swaps it to 0 and gives
 * those places back at once, so each place is given back exactly once, by the claimer or by the end. {@link #inputs}
 * is written at construction and set to null (volatile) when the request ends: the tasks left in the queue then hold
 * no input and are skipped by whichever predictor reaches them. {@link #deadlineNanos} is final: a predictor about to
 * run one of its inputs after it passed ends the request instead ({@link #expire}). {@link #tokenBudget} is final and
 * 0 for a request that cannot pass {@code max_tokens_per_request}; otherwise each predictor that counts one of its
 * inputs' tokens adds them to {@code tokens} ({@link #charge}), and the one whose addition passes the budget fails the
 * request, which drops its work not yet run like any early end. The three counts are fields reached through
 * {@link VarHandle}s rather than atomics, so a request costs one object, not four.
 */
final class PoolRequest<I, O> extends CompletableFuture<List<O>> implements BooleanSupplier {

    private static final VarHandle REMAINING;
    private static final VarHandle UNCLAIMED;
    private static final VarHandle TOKENS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            REMAINING = lookup.findVarHandle(PoolRequest.class, "remaining", int.class);
            UNCLAIMED = lookup.findVarHandle(PoolRequest.class, "unclaimed", int.class);
            TOKENS = lookup.findVarHandle(PoolRequest.class, "tokens", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Object[] outputs;
    private final BoundedCount queued;
    /** Until when it may run ({@link CallContext#deadlineNanos}), on the pool's clock. */
    private final long deadlineNanos;
    /** {@code max_tokens_per_request} when this request's inputs could pass it, else 0: not counted. */
    private final long tokenBudget;
    private volatile List<I> inputs;
    @SuppressWarnings("unused") // through REMAINING
    private volatile int remaining;
    @SuppressWarnings("unused") // through UNCLAIMED
    private volatile int unclaimed;
    @SuppressWarnings("unused") // through TOKENS
    private volatile long tokens;

    /**
     * @param queued        the queue's admission count, holding one place per input; given back as tasks are claimed
     * @param deadlineNanos until when it may run, or {@link CallContext#NO_DEADLINE}
     */
    PoolRequest(List<I> inputs, BoundedCount queued, long deadlineNanos) {
        this(inputs, queued, deadlineNanos, 0);
    }

    /**
     * @param tokenBudget the tokens its inputs may hold in all ({@code max_tokens_per_request}), or 0 when they are
     *                    not counted
     */
    PoolRequest(List<I> inputs, BoundedCount queued, long deadlineNanos, long tokenBudget) {
        this.outputs = new Object[inputs.size()];
        this.queued = queued;
        this.deadlineNanos = deadlineNanos;
        this.tokenBudget = tokenBudget;
        this.inputs = inputs;
        this.remaining = inputs.size();
        this.unclaimed = inputs.size();
    }

    /** The input at {@code index}, or null once the request has ended. */
    I input(int index) {
        List<I> held = inputs;
        return held == null ? null : held.get(index);
    }

    /**
     * Claims one task: true for as many callers as the request has inputs, unless it ended first. The claimer then
     * owns that task's place in the queue count and gives it back.
     */
    boolean claimTask() {
        for (;;) {
            int left = (int) UNCLAIMED.getVolatile(this);
            if (left == 0) {
                return false;
            }
            if (UNCLAIMED.compareAndSet(this, left, left - 1)) {
                return true;
            }
        }
    }

    /** Records the output of the input at {@code index}; the last one completes the request. */
    @SuppressWarnings("unchecked")
    void answer(int index, O output) {
        outputs[index] = output;
        if ((int) REMAINING.getAndAdd(this, -1) == 1) {
            complete((List<O>) Collections.unmodifiableList(Arrays.asList(outputs)));
        }
    }

    void fail(Throwable failure) {
        completeExceptionally(failure);
    }

    /**
     * Ends the request with {@link DeadlineExceeded} when its deadline has passed at {@code nowNanos}, so that none of
     * its inputs not yet run reaches the model (the caller then finds them gone); false, and nothing done, before.
     */
    boolean expire(long nowNanos, String deployment) {
        if (!CallContext.passed(deadlineNanos, nowNanos)) {
            return false;
        }
        fail(new DeadlineExceeded("the request's deadline passed while it waited for a predictor of model '"
                + deployment + "'; it was not run"));
        return true;
    }

    /** Whether its inputs' tokens are counted against {@code max_tokens_per_request} ({@link #charge}). */
    boolean countsTokens() {
        return tokenBudget > 0;
    }

    /**
     * Adds the {@code count} tokens of one of its inputs, counted by a predictor; when the sum passes the budget, fails
     * the request with {@link InvalidInput} naming the budget and the count reached, so that none of its work not yet
     * run is run.
     *
     * @return false when the request failed here (or had ended): the input is not run
     */
    boolean charge(int count, String deployment) {
        long total = (long) TOKENS.getAndAdd(this, (long) count) + count;
        if (total <= tokenBudget) {
            return !isDone();
        }
        fail(new InvalidInput("the request holds more tokens than the " + tokenBudget + " model '" + deployment
                + "' reads per request (max_tokens_per_request): " + total + " counted when it was stopped; the rest of"
                + " it was not run"));
        return false;
    }

    /** Whether the request is abandoned: done before its outputs were (failed, cancelled, expired). */
    @Override
    public boolean getAsBoolean() {
        return isDone();
    }

    @Override
    public boolean complete(List<O> value) {
        return ended(super.complete(value));
    }

    @Override
    public boolean completeExceptionally(Throwable failure) {
        return ended(super.completeExceptionally(failure));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return ended(super.cancel(mayInterruptIfRunning));
    }

    /** Gives back the places of unclaimed tasks and drops the inputs, once, when the request ends. */
    private boolean ended(boolean endedHere) {
        if (endedHere) {
            int left = (int) UNCLAIMED.getAndSet(this, 0);
            if (left > 0) {
                queued.release(left);
            }
            inputs = null;
        }
        return endedHere;
    }
}
