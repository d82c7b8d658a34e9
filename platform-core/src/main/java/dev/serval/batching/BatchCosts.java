package dev.serval.batching;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntUnaryOperator;

/**
 * The measured cost per text of a replica's batch sizes under load, and the size they choose: a predictor with a
 * backlog takes up to the size that has cost least per unit of input lately, not always {@code max_batch_size}.
 *
 * <p>Why. Which batch size is cheapest per text is a property of the CPU, the model and the texts (past a size, a
 * batch's activations leave the caches and the cost per text rises again), and it moves with the machine's load; the
 * load-time probe ({@code model.text.BatchProbe}) sees one predictor for a second on synthetic texts and can only say
 * whether batching pays. So the sizes are measured while serving, where the choice is made.
 *
 * <p>The rule. Batch sizes fall into classes that double: {1}, {2, 3}, {4..7}, ..., and the last ends at
 * {@code maxBatch} (the bound, never passed). {@link #target} answers how many inputs a predictor may take: the top of
 * the chosen class, except that every {@value #EXPLORE_EVERY}th take with a choice to make (a fair share over 1) aims
 * at another class's top, the classes in turn, so that every class's cost follows the machine as it changes. Only
 * inferences under backlog are measured ({@link BatchPolicy#measures}: inputs were still queued after the take),
 * since only there does the size matter; below that the queue, not this choice, decides the batch, and a predictor
 * never waits for a size (an idle replica runs a lone input at once, {@link BatchPolicy}). Each class keeps a running
 * average of its time per unit of input size ({@code Model.inputSize}: a text's length, so that a batch of long texts
 * does not look dear), weight {@value #WEIGHT} for the newest batch; the chosen class moves to the cheapest measured
 * class once that one costs at least {@value #REQUIRED_GAIN_PERCENT} % less per unit than the chosen one (hysteresis:
 * noise on a shared machine does not flip it back and forth). Exploring costs little: one batch in
 * {@value #EXPLORE_EVERY} runs at another size, and a small class explored runs few texts.
 *
 * <p>Where it starts: at the size the load-time probe preferred ({@code BatchingDecision.batchLimit}: 1 when it found
 * that batching does not pay, else {@code maxBatch}); measurements under load then move it either way, so a probe
 * fooled by a noisy second is corrected, and a CPU on which a text alone is cheapest stays at 1.
 *
 * <p>Threads. One instance per predictor pool and batch bound, called by every predictor thread: {@link #target}
 * before a take, {@link #record} after a measured inference. Best-effort by design, as {@code IdleCores}' averages: the
 * averages are double bits in an {@link AtomicLongArray} written opaquely without coordination (a lost update delays an
 * estimate by one batch), {@link #chosen} is a volatile written by whichever predictor recorded last; the choice it
 * feeds trades only speed, never an answer (only models whose rows are independent batch).
 */
public final class BatchCosts {

    /** One take with a choice to make in this many aims at another class than the chosen one. */
    public static final int EXPLORE_EVERY = 16;
    /** Weight of the newest batch in its class's running average. */
    public static final double WEIGHT = 0.125;
    /** How much less per unit a class must cost than the chosen one to be chosen instead. */
    public static final int REQUIRED_GAIN_PERCENT = 3;
    private static final double SWITCH_BELOW = 1 - REQUIRED_GAIN_PERCENT / 100.0;

    /** The smallest size of each class, ascending: 1, 2, 4, ..., and {@code maxBatch} when it is not a power of 2. */
    private final int[] lows;
    private final int maxBatch;
    /** Where costs for a bound start ({@link #withBound}). */
    private final IntUnaryOperator start;
    /** Each class's running average of nanoseconds per unit of input size, as double bits; 0 until measured. */
    private final AtomicLongArray nanosPerUnit;
    /** Takes with a choice to make so far: every {@value #EXPLORE_EVERY}th explores. */
    private final AtomicLong takes = new AtomicLong();
    /** The index of the chosen class. */
    private volatile int chosen;

    /**
     * @param maxBatch the bound ({@code max_batch_size} for a model that batches, 1 for one that does not)
     * @param start    the size to start from: the class holding it is chosen first (above {@code maxBatch}: the last)
     */
    public BatchCosts(int maxBatch, int start) {
        this(maxBatch, bound -> start, start);
    }

    private BatchCosts(int maxBatch, IntUnaryOperator starts, int start) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be >= 1, was " + maxBatch);
        }
        if (start < 1) {
            throw new IllegalArgumentException("start must be >= 1, was " + start);
        }
        int powers = Integer.SIZE - Integer.numberOfLeadingZeros(maxBatch); // 1, 2, 4, ... up to maxBatch
        this.lows = new int[Integer.bitCount(maxBatch) == 1 ? powers : powers + 1];
        for (int i = 0; i < powers; i++) {
            lows[i] = 1 << i;
        }
        lows[lows.length - 1] = Math.max(lows[lows.length - 1], maxBatch);
        this.maxBatch = maxBatch;
        this.start = starts;
        this.nanosPerUnit = new AtomicLongArray(lows.length);
        this.chosen = classOf(start);
    }

    /**
     * Costs for batches of at most {@code maxBatch}, starting at {@code start.applyAsInt(maxBatch)}: the size the load
     * preferred under that bound ({@code BatchingDecision.batchLimit}).
     */
    public static BatchCosts startingAt(int maxBatch, IntUnaryOperator start) {
        return new BatchCosts(maxBatch, start, start.applyAsInt(maxBatch));
    }

    /** Costs for the bound {@code maxBatch}: {@code this} when it is this one's, else fresh ones, started alike. */
    public BatchCosts withBound(int maxBatch) {
        return maxBatch == this.maxBatch ? this : startingAt(maxBatch, start);
    }

    /**
     * {@code policy} bounded for one take by {@link #target} of its fair share ({@link BatchPolicy#limitedTo}), given
     * the {@code queued} inputs and those {@code taken} already; {@code policy} itself when there is nothing to choose.
     */
    public BatchPolicy bound(BatchPolicy policy, int queued, int taken) {
        return !chooses() ? policy : policy.limitedTo(target(policy.share(queued, taken)));
    }

    /**
     * This, when the inference of a take of {@code taken} inputs that left {@code queuedAfter} queued is to be timed
     * for {@link #record} ({@link BatchPolicy#measures}); else null, as when there is nothing to choose.
     */
    public BatchCosts timing(int taken, int queuedAfter) {
        return chooses() && BatchPolicy.measures(taken, queuedAfter) ? this : null;
    }

    /** The bound: the largest size this ever answers. */
    public int maxBatch() {
        return maxBatch;
    }

    /** Whether there is a size to choose at all (false when the bound is 1: every input alone). */
    public boolean chooses() {
        return lows.length > 1;
    }

    /** The chosen size: the most inputs a take may have between explorations. */
    public int chosen() {
        return top(chosen);
    }

    /**
     * The most inputs a predictor whose fair share of the queue is {@code share} ({@link BatchPolicy#share}) may take:
     * the top of the chosen class; every {@value #EXPLORE_EVERY}th time the share is over 1, another class's top
     * instead, the classes in turn. The predictor takes the smaller of this and its share
     * ({@link BatchPolicy#limitedTo}).
     */
    public int target(int share) {
        int at = chosen;
        if (share <= 1 || !chooses()) {
            return top(at);
        }
        long n = takes.incrementAndGet();
        return n % EXPLORE_EVERY != 0 ? top(at) : top(explored(at, n / EXPLORE_EVERY, lows.length));
    }

    /** The class the {@code k}th exploration from class {@code chosen} tries: every other class in turn. */
    static int explored(int chosen, long k, int classes) {
        int i = (int) (k % (classes - 1));
        return i < chosen ? i : i + 1;
    }

    /**
     * Records a measured inference ({@link BatchPolicy#measures}): {@code size} inputs of {@code units} input size in
     * all took {@code nanos}; then chooses again.
     */
    public void record(int size, long units, long nanos) {
        if (size < 1 || nanos < 0) {
            return;
        }
        int at = classOf(size);
        double perUnit = Math.max((double) nanos / Math.max(units, 1), Double.MIN_NORMAL);
        double average = average(at);
        double updated = average == 0 ? perUnit : average + WEIGHT * (perUnit - average);
        nanosPerUnit.setOpaque(at, Double.doubleToRawLongBits(updated));
        choose();
    }

    /** Moves {@link #chosen} to the cheapest measured class if it is {@value #REQUIRED_GAIN_PERCENT} % cheaper. */
    private void choose() {
        int at = chosen;
        double current = average(at);
        int best = at;
        double cheapest = current;
        for (int i = 0; i < lows.length; i++) {
            double cost = average(i);
            if (cost > 0 && (cheapest == 0 || cost < cheapest)) {
                best = i;
                cheapest = cost;
            }
        }
        if (best != at && (current == 0 || cheapest <= SWITCH_BELOW * current)) {
            chosen = best;
        }
    }

    /** The largest size of class {@code at}. */
    private int top(int at) {
        return at == lows.length - 1 ? maxBatch : lows[at + 1] - 1;
    }

    /** The class of {@code size}: the last whose smallest size it reaches. */
    private int classOf(int size) {
        int at = 0;
        while (at + 1 < lows.length && lows[at + 1] <= size) {
            at++;
        }
        return at;
    }

    /** The running average of class {@code at}'s nanoseconds per unit, 0 until measured. */
    private double average(int at) {
        return Double.longBitsToDouble(nanosPerUnit.getOpaque(at));
    }
}
