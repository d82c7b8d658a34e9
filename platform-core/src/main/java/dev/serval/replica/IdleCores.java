package dev.serval.replica;

import java.util.concurrent.Semaphore;

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
 * <p>Measured, not assumed. Two threads beat one only when both get a core: on a machine busy with other work (other
 * deployments, other processes), a two-threaded inference waits for its descheduled thread at every operator and
 * takes about twice as long as a single-threaded one. So lone inferences keep two running averages of their time,
 * widened and not ({@link #lone}), and a lone inference borrows only while widened ones are the faster
 * ({@link #prefersWide}); every {@value #EXPLORE_EVERY}th lone inference runs the other way, so that both averages
 * follow the machine as it changes.
 *
 * <p>Threads: called by the pool's predictor threads only; a predictor releases exactly what it took. The averages
 * and the lone-inference count are written by predictors without coordination and read by all: best-effort by design
 * (a lost update delays an estimate by one inference; the choice it feeds only trades speed, never correctness).
 */
final class IdleCores {

    /** One lone inference in this many runs the way the averages do not prefer. */
    static final int EXPLORE_EVERY = 16;
    /** Weight of the newest time in its running average. */
    private static final double WEIGHT = 0.25;

    private final Semaphore cores;
    private final int predictors;
    /** Running averages of a lone inference's time, widened and not, in nanoseconds; 0 until measured. */
    private volatile double wideNanos;
    private volatile double narrowNanos;
    private int loneInferences;

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
     * For an inference about to start with nothing queued: whether it should try to borrow the idle cores, which it
     * should while widened lone inferences are measured faster than the others (or either is not measured yet), except
     * every {@value #EXPLORE_EVERY}th time, when it runs the other way.
     */
    boolean prefersWide() {
        int n = ++loneInferences;
        double wide = wideNanos;
        double narrow = narrowNanos;
        boolean wider = wide == 0 || narrow == 0 || wide <= narrow;
        return n % EXPLORE_EVERY == 0 ? !wider : wider;
    }

    /**
     * Records the time of an inference that ran alone: widened ({@code wide}), or on its own share while no other
     * predictor was running.
     */
    void lone(boolean wide, long nanos) {
        if (wide) {
            wideNanos = average(wideNanos, nanos);
        } else {
            narrowNanos = average(narrowNanos, nanos);
        }
    }

    private static double average(double average, long nanos) {
        return average == 0 ? nanos : average + WEIGHT * (nanos - average);
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
