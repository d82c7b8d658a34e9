package dev.serval.spec;

/**
 * The threads of one replica. Both are part of the replica's shape: a change rolls the replicas.
 *
 * @param predictorThreads predictor threads per replica, each owning one predictor; default 2
 * @param intraOpThreads   ONNX Runtime threads inside one inference (part of the loaded model's identity); default 1
 */
public record PredictorSpec(int predictorThreads, int intraOpThreads) {

    public static final IntRange PREDICTOR_THREADS = new IntRange("predictor_threads", 1, 64);
    public static final IntRange INTRA_OP_THREADS = new IntRange("intra_op_threads", 1, 64);

    public static final PredictorSpec DEFAULTS = new PredictorSpec(2, 1);

    public PredictorSpec {
        PREDICTOR_THREADS.check(predictorThreads);
        INTRA_OP_THREADS.check(intraOpThreads);
    }

    public PredictorSpec withPredictorThreads(int threads) {
        return threads == predictorThreads ? this : new PredictorSpec(threads, intraOpThreads);
    }

    public PredictorSpec withIntraOpThreads(int threads) {
        return threads == intraOpThreads ? this : new PredictorSpec(predictorThreads, threads);
    }
}
