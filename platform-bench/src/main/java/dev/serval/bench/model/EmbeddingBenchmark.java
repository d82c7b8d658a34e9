package dev.serval.bench.model;

import dev.serval.bench.BenchmarkBase;
import dev.serval.deployment.Deployment;
import dev.serval.deployment.ServingEngine;
import dev.serval.model.Embedding;
import dev.serval.model.ModelFiles;
import dev.serval.model.Predictor;
import dev.serval.model.LoadOptions;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.onnx.OnnxOptions;
import dev.serval.model.text.TextModels;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.PredictorSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Texts embedded per second by the default model (quantised all-MiniLM-L6-v2 from the class path, 256-token
 * limit) on short chat-like texts: the two ways of spending two cores on it, plus one core alone for scale.
 * Every operation embeds one text, so each score is in texts/s.
 *
 * <ul>
 *   <li>{@link #perTextOnPool}: the serving path. A {@link Deployment} of one replica with 2 predictor threads
 *       of 1 intra-op thread each (the {@link DeploymentSpec#defaults} shape), started by a
 *       {@link ServingEngine}, driven by two closed-loop callers ({@code @Threads(2)}) that each submit one
 *       text as its own request and wait for its embedding, as two HTTP clients sending one text per request
 *       would. Two callers keep both predictors busy while paying the full per-request cost: validation,
 *       admission, routing, queue hand-off, waking the caller. (One caller submitting a large burst would
 *       instead measure the pool with a queue that never empties, a bound this path can only approach.)</li>
 *   <li>{@link #oneTwoThreadedPredictor}, the baseline: one predictor whose ONNX Runtime session has 2
 *       intra-op threads, called back to back on one thread, which is how a single-predictor server would
 *       use both cores.</li>
 *   <li>{@link #singlePredictorOneThread}: one predictor with 1 intra-op thread, called back to back on one
 *       thread; what each pool predictor can do alone, so twice this is the pool's ceiling.</li>
 * </ul>
 *
 * <p>Why: {@link DeploymentSpec} defaults to two single-threaded predictors on the premise that, for short
 * texts, ONNX Runtime's intra-op parallelism has too little work per operator to pay for its synchronisation,
 * while two independent inferences scale almost linearly. This benchmark measures that claim, and the pool's
 * per-request overhead on top of it, in one run on the same texts.
 *
 * <p>The texts are 256 word sequences of 5 to 30 words (8 to 37 tokens, about 21 on average) drawn from a
 * fixed vocabulary with a fixed seed, the same in every run; each calling thread cycles through all of them
 * from its own starting point. Nothing is read from the network: the model files are copied from the class
 * path into {@code ${java.io.tmpdir}/serval-bench-models} once and loaded from there.
 *
 * <p>Run from the repository root (a little over 2 minutes on two cores):
 * <pre>{@code
 * ./mvnw -q -B -DskipTests package -pl platform-bench -am
 * java -jar platform-bench/target/benchmarks.jar EmbeddingBenchmark
 * }</pre>
 * Add {@code -prof gc} for the bytes allocated per text.
 */
public class EmbeddingBenchmark extends BenchmarkBase {

    /** Tokens kept per text, as the server configures the default model. */
    private static final int MAX_LENGTH = 256;
    private static final long SEED = 20240607L;
    /** A power of two, so that a cursor wraps with a mask. */
    private static final int TEXT_COUNT = 256;

    private static final String[] VOCABULARY = {
        "hi", "hello", "thanks", "please", "can", "you", "help", "me", "with", "my", "order", "account",
        "password", "reset", "the", "a", "an", "is", "it", "was", "not", "working", "again", "today", "yesterday",
        "why", "how", "what", "when", "where", "does", "do", "I", "we", "they", "need", "want", "to", "change",
        "cancel", "refund", "delivery", "late", "package", "arrived", "broken", "screen", "phone", "laptop",
        "app", "crashes", "after", "update", "login", "email", "address", "shipping", "invoice", "payment",
        "card", "declined", "subscription", "plan", "upgrade", "price", "discount", "code", "support", "agent",
        "chat", "wait", "minutes", "hours", "still", "no", "answer", "great", "awesome", "sorry", "problem",
        "issue", "fixed", "and", "but", "so", "because", "if", "or", "just", "really", "quick", "question",
        "about", "for", "on", "in", "at", "this", "that", "your", "our", "new", "old", "same", "error", "message",
        "says", "try", "tried", "restart", "settings", "notifications", "battery", "wifi", "connection", "slow",
    };
    private static final String[] ENDINGS = {".", "?", "!", "", "?", "."};
    /** Initialised after the word lists it draws from. */
    private static final String[] TEXTS = chatTexts(TEXT_COUNT, SEED);

    /** Each calling thread submits a one-text request and waits for it: two clients, one text per request. */
    @Benchmark
    @Threads(2)
    public Embedding perTextOnPool(Pool pool, Cursor cursor) {
        return pool.deployment.submit(List.of(cursor.next())).join().getFirst();
    }

    /** Baseline: one predictor with two intra-op threads, called sequentially on one thread. */
    @Benchmark
    public Embedding oneTwoThreadedPredictor(TwoThreadedPredictor predictor, Cursor cursor) throws Exception {
        return predictor.predictor.predict(cursor.next());
    }

    /** One predictor with one intra-op thread, called sequentially on one thread: one pool worker's share. */
    @Benchmark
    public Embedding singlePredictorOneThread(OneThreadedPredictor predictor, Cursor cursor) throws Exception {
        return predictor.predictor.predict(cursor.next());
    }

    /** The deployment under test, shared by the calling threads; ready before the first iteration. */
    @State(Scope.Benchmark)
    public static class Pool {


        ServingEngine engine;
        Deployment<String, Embedding> deployment;

        @Setup(Level.Trial)
        public void start() throws InterruptedException {
            DeploymentSpec spec = DeploymentSpec.defaults("bench-minilm", "bundled:all-minilm-l6-v2-q")
                    .withNumReplicas(1)
                    .withPredictors(new PredictorSpec(2, 1, true));
            engine = new ServingEngine();
            deployment = engine.deploy(spec, deployed -> loadModel(deployed.predictors().intraOpThreads()));
            BenchmarkBase.awaitReady(deployment);
        }

        @TearDown(Level.Trial)
        public void stop() {
            engine.close();
        }
    }

    /**
     * A model and its one predictor, for the one JMH thread that uses it. JMH's default executor keeps its
     * worker threads for the whole trial and binds each thread-scoped state to one of them, so the predictor
     * is created, called and closed by a single thread, as {@link Predictor} requires.
     */
    public abstract static class PredictorOnThisThread {

        private Model<String, Embedding> model;
        Predictor<String, Embedding> predictor;

        abstract int intraOpThreads();

        @Setup(Level.Trial)
        public void load() throws IOException {
            model = loadModel(intraOpThreads());
            predictor = model.newPredictor();
        }

        @TearDown(Level.Trial)
        public void close() {
            predictor.close();
            model.close();
        }
    }

    @State(Scope.Thread)
    public static class TwoThreadedPredictor extends PredictorOnThisThread {
        @Override
        int intraOpThreads() {
            return 2;
        }
    }

    @State(Scope.Thread)
    public static class OneThreadedPredictor extends PredictorOnThisThread {
        @Override
        int intraOpThreads() {
            return 1;
        }
    }

    /** One calling thread's position in {@link #TEXTS}; threads start evenly spread so they embed different texts. */
    @State(Scope.Thread)
    public static class Cursor {

        private int next;

        @Setup(Level.Trial)
        public void start(ThreadParams thread) {
            next = thread.getThreadIndex() * TEXT_COUNT / thread.getThreadCount();
        }

        String next() {
            String text = TEXTS[next];
            next = (next + 1) & (TEXT_COUNT - 1);
            return text;
        }
    }

    /** Loads the default model from the class path; also used by {@code deployment.ReplicaMemoryBenchmark}. */
    public static Model<String, Embedding> loadModel(int intraOpThreads) throws IOException {
        Path directory = Path.of(System.getProperty("java.io.tmpdir"), "serval-bench-models");
        ClassLoader classLoader = EmbeddingBenchmark.class.getClassLoader();
        return TextModels.embedding(
                ModelFiles.extract(classLoader, "all-minilm-l6-v2-q.onnx", directory),
                ModelFiles.extract(classLoader, "all-minilm-l6-v2-q-tokenizer.json", directory),
                ModelKind.TEXT_EMBEDDING.defaultOutput(),
                OnnxOptions.none(),
                LoadOptions.defaults().withMaxLength(MAX_LENGTH).withIntraOpThreads(intraOpThreads));
    }

    /**
     * {@code count} texts of 5 to 30 words each. {@link Random} with a seed yields the same sequence on every
     * JVM (its algorithm is specified), so every run embeds the same texts.
     */
    public static String[] chatTexts(int count, long seed) {
        Random random = new Random(seed);
        String[] texts = new String[count];
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < count; i++) {
            text.setLength(0);
            int words = 5 + random.nextInt(26);
            for (int w = 0; w < words; w++) {
                String word = VOCABULARY[random.nextInt(VOCABULARY.length)];
                if (w == 0) {
                    text.append(Character.toUpperCase(word.charAt(0))).append(word, 1, word.length());
                } else {
                    text.append(' ').append(word);
                }
            }
            texts[i] = text.append(ENDINGS[random.nextInt(ENDINGS.length)]).toString();
        }
        return texts;
    }
}
