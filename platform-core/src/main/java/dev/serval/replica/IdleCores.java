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
 * <p>Threads: called by the pool's predictor threads only; a predictor releases exactly what it took.
 */
final class IdleCores {

    private final Semaphore cores;
    private final int predictors;

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

    /** After {@link #take}: takes every other predictor's share too, if none is running now. */
    boolean borrowAll() {
        return cores.tryAcquire(predictors - 1);
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
