package dev.serval.replica;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The cores of one replica's predictors, lent to a lone inference. Each predictor thread owns one share of the
 * replica's cores (its intra-op threads). An inference that starts while every other predictor is idle and nothing
 * is queued borrows all of them and runs on the model's wide session ({@link dev.serval.model.Predictor#widen}); a
 * predictor that takes work meanwhile waits for it to end (at most one inference) rather than run beside it on cores
 * it uses: two inferences on three threads over two cores are slower than either order.
 *
 * <p>Design: a semaphore of one permit per predictor. A predictor takes its own permit before each inference
 * ({@link #take}), which waits only while a lone inference holds every permit; it then tries to take all the others
 * at once ({@link #borrowAll}), which succeeds only when no other predictor holds one, that is, none is running. Under
 * load permits are always free and the borrow always fails: the hot path is two uncontended CAS operations per
 * inference. Best-effort: work queued just after a borrow waits for that inference to end; nothing is ever lost or
 * run on a core that is not free.
 *
 * <p>Measured, not assumed, per input size. Two threads beat one only when both get a core and the input is large
 * enough to split: on a machine busy with other work (other deployments, other processes), a two-threaded inference
 * waits for its descheduled thread at every operator and takes about twice as long as a single-threaded one; and on a
 * short text the second thread has too little to do to repay its wake-up ({@code scripts/threads_by_length.py};
 * figures in docs/benchmarks/design-figures.md). So lone inferences keep running averages of their time per unit of
 * input size ({@link dev.serval.model.Model#inputSize}), widened and not, for each size class (the size's bit length:
 * sizes within a factor of two), and a lone inference borrows only while widened ones of its class are measured at
 * least {@value #REQUIRED_GAIN_PERCENT} % faster ({@link #prefersWide}): a widened inference keeps every core of the
 * replica busy, so a tie is not worth it. A class tries each way once before it compares, and every
 * {@value #EXPLORE_EVERY}th lone inference of a class runs the other way, so that both averages follow the machine as
 * it changes.
 *
 * <p>Switching costs, and the averages include it. The first inference on the session the replica has not used lately
 * is slow: its copy of the weights is out of the caches and its worker threads asleep ({@code WideSessionSwitch} in
 * platform-bench measures it; docs/benchmarks/design-figures.md). An explored time is such a
 * cold one, and so is every widened inference of an occasional long input among short ones in real traffic: a class
 * widens only when that pays even with the switch. (Recording only warm times, and exploring several inferences in a
 * row to get them, was measured too: the extra switches cost lone short requests a tenth of their rate.)
 *
 * <p>Threads: called by the pool's predictor threads only; a predictor releases exactly what it took. The averages
 * and the lone-inference counts are written by predictors without coordination and read by all: best-effort by design
 * (a lost update delays an estimate by one inference; the choice it feeds only trades speed, never correctness). The
 * averages are kept as the bits of doubles in an {@link AtomicLongArray}, read and written opaquely: never torn, and
 * never a fence on the inference path.
 */
final class IdleCores {

    /** One lone inference of a size class in this many runs the way not preferred. */
    static final int EXPLORE_EVERY = 64;
    /** How much faster per unit of size widened lone inferences of a class must be to be preferred. */
    static final int REQUIRED_GAIN_PERCENT = 10;
    private static final double WIDE_AT_MOST = 1 - REQUIRED_GAIN_PERCENT / 100.0;
    /** Weight of the newest time in its running average. */
    private static final double WEIGHT = 0.125;
    /** Size classes: a size's bit length, 1 to 63 (a size below 1 counts as 1). */
    private static final int CLASSES = 64;

    private final Semaphore cores;
    private final int predictors;
    /**
     * Running averages of a lone inference's time per unit of input size, in nanoseconds, as double bits: widened ones
     * at {@code 2 * class}, the others at {@code 2 * class + 1}; 0 until measured.
     */
    private final AtomicLongArray nanosPerUnit = new AtomicLongArray(2 * CLASSES);
    private final int[] loneInferences = new int[CLASSES];

    IdleCores(int predictors) {
        if (predictors < 2) {
            throw new IllegalArgumentException("lending cores needs at least 2 predictors, was " + predictors);
        }
        this.predictors = predictors;
        this.cores = new Semaphore(predictors);
    }

    /**
     * Takes the calling predictor's own share, waiting while a lone inference borrowed every share. The wait is not
     * interruptible: it ends when that inference does, and the predictor then runs what it already took.
     */
    void take() {
        cores.acquireUninterruptibly();
    }

    /** Takes every predictor's share, waiting until none is running (a warm-up of the wide session). */
    void takeAll() {
        cores.acquireUninterruptibly(predictors);
    }

    /** After {@link #take}: takes every other predictor's share too, if none is running now. */
    boolean borrowAll() {
        return cores.tryAcquire(predictors - 1);
    }

    /**
     * For an inference of {@code size} ({@link dev.serval.model.Model#inputSize}, summed over a batch) about to start
     * with nothing queued: whether it should try to borrow the idle cores. It should the first time its size class is
     * seen, not the second (so that both ways are measured), then while widened lone inferences of its class are
     * measured at least {@value #REQUIRED_GAIN_PERCENT} % faster, except every {@value #EXPLORE_EVERY}th time, when it
     * runs the other way.
     */
    boolean prefersWide(long size) {
        int sizeClass = sizeClass(size);
        double wide = average(sizeClass, true);
        double narrow = average(sizeClass, false);
        if (wide == 0 || narrow == 0) {
            return wide == 0;
        }
        int n = ++loneInferences[sizeClass];
        boolean wider = wide <= WIDE_AT_MOST * narrow;
        return n % EXPLORE_EVERY == 0 ? !wider : wider;
    }

    /**
     * Records the time of an inference of {@code size} that ran alone: widened ({@code wide}), or on its own share
     * while no other predictor was running.
     */
    void lone(long size, boolean wide, long nanos) {
        int sizeClass = sizeClass(size);
        double perUnit = (double) nanos / Math.max(size, 1);
        double average = average(sizeClass, wide);
        double updated = average == 0 ? perUnit : average + WEIGHT * (perUnit - average);
        nanosPerUnit.setOpaque(slot(sizeClass, wide), Double.doubleToRawLongBits(updated));
    }

    /** The size class of {@code size}: its bit length, so that the sizes of one class are within a factor of two. */
    static int sizeClass(long size) {
        return Long.SIZE - Long.numberOfLeadingZeros(Math.max(size, 1));
    }

    private double average(int sizeClass, boolean wide) {
        return Double.longBitsToDouble(nanosPerUnit.getOpaque(slot(sizeClass, wide)));
    }

    private static int slot(int sizeClass, boolean wide) {
        return 2 * sizeClass + (wide ? 0 : 1);
    }

    /** Predictors waiting in {@link #take} now (an estimate, for tests and diagnostics). */
    int waiting() {
        return cores.getQueueLength();
    }

    /** Gives back what the caller took: its own share, and the others' when it {@code borrowed} them. */
    void release(boolean borrowed) {
        cores.release(borrowed ? predictors : 1);
    }
}
