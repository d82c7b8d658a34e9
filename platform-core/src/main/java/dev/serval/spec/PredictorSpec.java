package dev.serval.spec;

/**
 * The threads of one replica. All three are part of the replica's shape: a change rolls the replicas.
 *
 * @param predictorThreads predictor threads per replica, each owning one predictor; default 2
 * @param intraOpThreads   ONNX Runtime threads inside one inference (part of the loaded model's identity); default 1
 * @param lendIdleCores    whether an inference that starts while the replica's other predictors are idle and nothing
 *                         is queued runs on all of the replica's cores ({@code predictorThreads × intraOpThreads}
 *                         ONNX Runtime threads, at most the machine's) instead of its own share; the model then holds
 *                         a second session of that width. Default true; no effect with a single core per replica
 */
public record PredictorSpec(int predictorThreads, int intraOpThreads, boolean lendIdleCores) {

    public static final IntRange PREDICTOR_THREADS = new IntRange("predictor_threads", 1, 64);
    public static final IntRange INTRA_OP_THREADS = new IntRange("intra_op_threads", 1, 64);

    public static final PredictorSpec DEFAULTS = new PredictorSpec(2, 1, true);

    public PredictorSpec {
        PREDICTOR_THREADS.check(predictorThreads);
        INTRA_OP_THREADS.check(intraOpThreads);
    }

    public PredictorSpec withPredictorThreads(int threads) {
        return threads == predictorThreads ? this : new PredictorSpec(threads, intraOpThreads, lendIdleCores);
    }

    public PredictorSpec withIntraOpThreads(int threads) {
        return threads == intraOpThreads ? this : new PredictorSpec(predictorThreads, threads, lendIdleCores);
    }

    public PredictorSpec withLendIdleCores(boolean lend) {
        return lend == lendIdleCores ? this : new PredictorSpec(predictorThreads, intraOpThreads, lend);
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
