package dev.serval.api;

import dev.serval.api.serving.ModelSource;
import dev.serval.error.InvalidInput;
import dev.serval.model.Embedding;
import dev.serval.model.Model;
import dev.serval.model.ModelKind;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import dev.serval.spec.DeploymentSpec;
import jakarta.inject.Singleton;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test models. {@code gated:} is a 4-dimensional embedder whose predictors block on {@link #GATE} for texts
 * starting with {@code "wait"} and record which threads ran the model. {@code gated-load:} is the same model,
 * but its loading blocks on {@link #LOAD_GATE} first. {@code gated-fragile:} fails its probe (and so its warm-up
 * and health checks) while {@link #FRAGILE_BROKEN} is set. Texts starting with {@code "boom"} always fail.
 * {@code gated-versioned:} differs by version: version {@code v} refuses (by validation) texts starting with
 * {@code "vN-only"} for any other N, and would fail on them if they reached it; its embedding is {@code [v, 0, 0, 0]};
 * the probe of its version 2 waits for {@link #V2_PROBE_GATE}. Each reads {@code max_length} tokens of a text at
 * most (0 by default: no tokens), as a text model reports them to admission ({@code max_pending_tokens}).
 */
@Singleton
public class GatedModelSource implements ModelSource {

    static final Semaphore GATE = new Semaphore(0);
    static final Semaphore LOAD_GATE = new Semaphore(0);
    static volatile boolean FRAGILE_BROKEN;
    static final Semaphore V2_PROBE_GATE = new Semaphore(0);
    static final AtomicInteger V2_PROBES_WAITING = new AtomicInteger();
    static final AtomicInteger WAITING = new AtomicInteger();
    static final Set<String> MODEL_THREADS = ConcurrentHashMap.newKeySet();
    static final Set<String> MODEL_INPUTS = ConcurrentHashMap.newKeySet();
    /** {@code gated-load:} loads that reached {@link #LOAD_GATE}, and models of that kind closed since. */
    static final AtomicInteger GATED_LOADS = new AtomicInteger();
    static final AtomicInteger GATED_LOADS_CLOSED = new AtomicInteger();

    /** Waits (up to 30 s) until {@code count} predictors are held at {@link #GATE}. */
    static void awaitWaiting(int count) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (WAITING.get() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("predictors never reached the gate: " + WAITING.get() + " of " + count);
            }
            Thread.sleep(10); // other threads are on their way to the gate; nothing to join on
        }
    }

    @Override
    public boolean accepts(String reference) {
        return reference.equals("gated:") || reference.equals("gated-load:") || reference.equals("gated-fragile:")
                || reference.equals("gated-versioned:");
    }

    /** Whether {@code input} is meant only for a version other than {@code version} ({@code "vN-only..."}). */
    private static boolean otherVersionOnly(String input, String version) {
        return input.startsWith("v") && input.contains("-only") && !input.startsWith("v" + version + "-only");
    }

    @Override
    public ModelKind kind(DeploymentSpec spec) {
        return ModelKind.TEXT_EMBEDDING;
    }

    @Override
    public Model<String, Embedding> load(DeploymentSpec spec) throws InterruptedException {
        String reference = spec.model().name();
        boolean gatedLoad = reference.equals("gated-load:");
        if (gatedLoad) {
            GATED_LOADS.incrementAndGet();
            LOAD_GATE.acquire();
        }
        boolean fragile = reference.equals("gated-fragile:");
        String version = reference.equals("gated-versioned:") ? spec.version() : null;
        long maxInputTokens = spec.model().maxLength();
        return new Model<>() {
            @Override
            public long maxInputTokens() {
                return maxInputTokens; // its max_length: a text model's, for admission's token estimate
            }

            @Override
            public dev.serval.request.TensorIO<String, Embedding> io() {
                return dev.serval.model.text.EmbeddingIO.instance();
            }

            @Override
            public ModelSignature signature() {
                return new ModelSignature("test", List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                        List.of(new TensorSignature("embedding", "FP32", List.of(-1L, 4L))));
            }

            @Override
            public Predictor<String, Embedding> newPredictor() {
                return new Predictor<>() {
                    @Override
                    public Embedding predict(String input) throws InterruptedException {
                        MODEL_THREADS.add(Thread.currentThread().getName());
                        MODEL_INPUTS.add(input);
                        if (input.startsWith("boom") || (fragile && FRAGILE_BROKEN && input.equals("probe"))) {
                            throw new IllegalStateException("the model failed on '" + input + "'");
                        }
                        if (version != null) {
                            if (otherVersionOnly(input, version)) {
                                throw new IllegalStateException("version " + version + " cannot run '" + input + "'");
                            }
                            if (version.equals("2") && input.equals("probe")) {
                                V2_PROBES_WAITING.incrementAndGet();
                                V2_PROBE_GATE.acquire();
                                V2_PROBES_WAITING.decrementAndGet();
                            }
                            return new Embedding(new float[] {Float.parseFloat(version), 0, 0, 0}, input.length());
                        }
                        if (input.startsWith("wait")) {
                            WAITING.incrementAndGet();
                            GATE.acquire();
                            WAITING.decrementAndGet();
                        }
                        return new Embedding(new float[] {1, 0, 0, 0}, input.length());
                    }

                    @Override
                    public void close() {
                    }
                };
            }

            @Override
            public String probeInput() {
                return "probe";
            }

            @Override
            public void validate(String input, int index) {
                if (version != null && otherVersionOnly(input, version)) {
                    throw new InvalidInput("text " + index + " is for another version than " + version);
                }
            }

            @Override
            public void close() {
                if (gatedLoad) {
                    GATED_LOADS_CLOSED.incrementAndGet();
                }
            }
        };
    }
}
