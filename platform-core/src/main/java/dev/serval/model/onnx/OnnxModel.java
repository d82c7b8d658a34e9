package dev.serval.model.onnx;

import ai.djl.Model;
import ai.djl.inference.Predictor;
import ai.djl.translate.TranslateException;
import ai.djl.translate.Translator;
import dev.serval.model.LoadOptions;
import java.io.IOException;
import java.nio.file.Path;

/**
 * One ONNX file loaded for serving, in one or two ONNX Runtime sessions. The narrow session runs an inference on the
 * deployment's intra-op threads: what every predictor uses while the replica is busy. The wide session, loaded only
 * when the replica may lend its idle cores to a lone inference ({@link LoadOptions#idleSessionThreads}), runs one on
 * all of them: a short text alone on two cores answers in about two thirds of the time it takes on one, while under
 * load two single-threaded inferences side by side serve more texts per second than one two-threaded inference at a
 * time. Which session an inference uses is the predictor pool's choice ({@link Runner#widen}); both give the same
 * answers.
 *
 * <p>Costs of the wide session: its own copy of the weights (ONNX Runtime's Java API shares no prepacked weights
 * between sessions) and its own intra-op threads, which spin only during its inferences
 * ({@link OnnxSessions#FORCE_SPINNING_STOP}) so that they do not compete with the narrow inferences that follow.
 *
 * <p>Thread-safe: ONNX Runtime sessions are. A {@link Runner} is not: one per predictor thread.
 */
public final class OnnxModel implements AutoCloseable {

    private final Model narrow;
    /** The session on the replica's cores; null when there is none. */
    private final Model wide;
    private final int wideThreads;

    private OnnxModel(Model narrow, Model wide, int wideThreads) {
        this.narrow = narrow;
        this.wide = wide;
        this.wideThreads = wideThreads;
    }

    /**
     * Loads the narrow session on {@code load.intraOpThreads()} threads and, when
     * {@link LoadOptions#idleSessionThreads} of this machine's processors is not 0, the wide one on that many.
     *
     * @throws IOException when the file is missing or ONNX Runtime refuses it
     */
    public static OnnxModel open(Path modelFile, LoadOptions load, OnnxOptions options) throws IOException {
        int wideThreads = load.idleSessionThreads(Runtime.getRuntime().availableProcessors());
        Model narrow = OnnxSessions.open(modelFile, load.intraOpThreads(), options, false);
        if (wideThreads == 0) {
            return new OnnxModel(narrow, null, 0);
        }
        try {
            return new OnnxModel(narrow, OnnxSessions.open(modelFile, wideThreads, options, true), wideThreads);
        } catch (IOException | RuntimeException e) {
            narrow.close();
            throw e;
        }
    }

    /** Whether a wide session was loaded, so that {@link Runner#widen} can change anything. */
    public boolean widens() {
        return wide != null;
    }

    /** The wide session's intra-op threads; 0 without one. */
    public int wideThreads() {
        return wideThreads;
    }

    /** A runner for one predictor thread, translating with {@code translator}, narrow until widened. */
    public <I, O> Runner<I, O> newRunner(Translator<I, O> translator) {
        Predictor<I, O> first = narrow.newPredictor(translator);
        try {
            return new Runner<>(first, wide == null ? null : wide.newPredictor(translator));
        } catch (RuntimeException e) {
            first.close();
            throw e;
        }
    }

    @Override
    public void close() {
        narrow.close();
        if (wide != null) {
            wide.close();
        }
    }

    /**
     * One predictor thread's DJL predictors over the model's sessions: each inference runs on the narrow one, or on
     * the wide one while widened. Not thread-safe.
     */
    public static final class Runner<I, O> implements AutoCloseable {

        private final Predictor<I, O> narrow;
        private final Predictor<I, O> wide;
        private boolean widened;

        private Runner(Predictor<I, O> narrow, Predictor<I, O> wide) {
            this.narrow = narrow;
            this.wide = wide;
        }

        /** Runs one inference on the session this runner is set to. */
        public O predict(I input) throws TranslateException {
            return widened ? wide.predict(input) : narrow.predict(input);
        }

        /** Sets the session of the next inferences: the wide one ({@code true}, when the model has it) or the narrow one. */
        public void widen(boolean wide) {
            widened = wide && this.wide != null;
        }

        @Override
        public void close() {
            narrow.close();
            if (wide != null) {
                wide.close();
            }
        }
    }
}
