package dev.serval.spec;

import java.time.Duration;

/**
 * The threads of one replica. The first three are part of the replica's shape: a change rolls the replicas; the last
 * changes in place.
 *
 * @param predictorThreads predictor threads per replica, each owning one predictor; default 2
 * @param intraOpThreads   ONNX Runtime threads inside one inference (part of the loaded model's identity); default 1
 * @param lendIdleCores    whether an inference that starts while the replica's other predictors are idle and nothing
 *                         is queued runs on all of the replica's cores ({@code predictorThreads × intraOpThreads}
 *                         ONNX Runtime threads, at most the machine's) instead of its own share; the model then holds
 *                         a second session of that width. Default true; no effect with a single core per replica
 * @param idleSpin         how long a predictor thread that found no work keeps looking for it, giving its core to any
 *                         other runnable thread between looks, before it sleeps: a request arriving within it starts
 *                         without waking a sleeping thread (a wake-up costs a lone request a tenth of a millisecond or
 *                         more on a VM). One predictor of
 *                         a replica spins at a time. Default
 *                         {@value #DEFAULT_IDLE_SPIN_MICROS} µs; 0 sleeps at once
 */
public record PredictorSpec(int predictorThreads, int intraOpThreads, boolean lendIdleCores, Duration idleSpin) {

    public static final IntRange PREDICTOR_THREADS = new IntRange("predictor_threads", 1, 64);
    public static final IntRange INTRA_OP_THREADS = new IntRange("intra_op_threads", 1, 64);
    public static final DurationRange IDLE_SPIN = new DurationRange("idle_spin", Duration.ZERO, Duration.ofMillis(10));
    public static final long DEFAULT_IDLE_SPIN_MICROS = 400;
    public static final Duration DEFAULT_IDLE_SPIN = Duration.ofNanos(DEFAULT_IDLE_SPIN_MICROS * 1000);

    public static final PredictorSpec DEFAULTS = new PredictorSpec(2, 1, true);

    public PredictorSpec {
        PREDICTOR_THREADS.check(predictorThreads);
        INTRA_OP_THREADS.check(intraOpThreads);
        IDLE_SPIN.check(idleSpin);
    }

    /** The threads given, with the default {@link #idleSpin}. */
    public PredictorSpec(int predictorThreads, int intraOpThreads, boolean lendIdleCores) {
        this(predictorThreads, intraOpThreads, lendIdleCores, DEFAULT_IDLE_SPIN);
    }

    public PredictorSpec withPredictorThreads(int threads) {
        return threads == predictorThreads ? this
                : new PredictorSpec(threads, intraOpThreads, lendIdleCores, idleSpin);
    }

    public PredictorSpec withIntraOpThreads(int threads) {
        return threads == intraOpThreads ? this
                : new PredictorSpec(predictorThreads, threads, lendIdleCores, idleSpin);
    }

    public PredictorSpec withLendIdleCores(boolean lend) {
        return lend == lendIdleCores ? this : new PredictorSpec(predictorThreads, intraOpThreads, lend, idleSpin);
    }

    public PredictorSpec withIdleSpin(Duration spin) {
        return spin.equals(idleSpin) ? this : new PredictorSpec(predictorThreads, intraOpThreads, lendIdleCores, spin);
    }

    /** Whether replicas of both would run the same threads: everything but {@link #idleSpin}, which changes in place. */
    public boolean sameThreads(PredictorSpec other) {
        return predictorThreads == other.predictorThreads && intraOpThreads == other.intraOpThreads
                && lendIdleCores == other.lendIdleCores;
    }

    /**
     * ONNX Runtime threads of an inference that borrows the idle replica's cores: {@code predictorThreads ×
     * intraOpThreads}, or 0 when it never borrows (lending off, or nothing to lend: one predictor). The loader caps it
     * at the machine's processors.
     */
    public int idleIntraOpThreads() {
        return lendIdleCores && predictorThreads > 1 ? predictorThreads * intraOpThreads : 0;
    }
}
