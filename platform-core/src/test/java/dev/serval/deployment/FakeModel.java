package dev.serval.deployment;

import dev.serval.error.InvalidInput;
import dev.serval.model.BatchingDecision;
import dev.serval.model.Model;
import dev.serval.model.ModelSignature;
import dev.serval.model.Predictor;
import dev.serval.model.TensorSignature;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * A model that upper-cases its input. Inputs starting with {@code "wait"} block until {@link #gate} is
 * released; {@code "boom"} fails; {@code "bad"} is refused by validation; {@code "reject"} passes validation and is
 * refused by the model itself while it runs ({@link InvalidInput} from inside {@code predict}, so a batch holding it
 * fails); {@code "hang"} blocks until {@link #hang} opens and ignores interrupts meanwhile (a thread stuck in native
 * code); the probe fails on replicas whose id is in {@link #doomed} (their threads are named
 * {@code serval-<deployment>-r<id>-<n>}). Records who ran what, and whether the model was closed while a predictor
 * was inside it ({@link #closedWhilePredicting}: native memory freed under a running thread).
 * Inputs starting with {@link #refusedPrefix} are refused by validation and, should one reach the model anyway, fail
 * it (as a real model fails on input of another shape); the probe waits for {@link #probeGate} when one is set.
 * With {@link #widens} set (before the pool starts) its predictors take {@link Predictor#widen}: the inputs run widened
 * are recorded in {@link #widened}, and an inference that ran widened beside another one sets {@link #wideOverlap}.
 */
public final class FakeModel implements Model<String, String> {

    public final Semaphore gate = new Semaphore(0);
    public final AtomicInteger waiting = new AtomicInteger();
    public final AtomicInteger predictions = new AtomicInteger();
    public final AtomicInteger openPredictors = new AtomicInteger();
    public final Set<String> threads = ConcurrentHashMap.newKeySet();
    /** Every input that reached the model (the probe included), in the order they did. */
    public final java.util.List<String> reached = new java.util.concurrent.CopyOnWriteArrayList<>();
    final Set<Long> doomed = ConcurrentHashMap.newKeySet();
    volatile boolean allProbesFail;
    /** Whether the model batches (set before the deployment starts); each batch's size is recorded. */
    public volatile boolean batches;
    public final java.util.List<Integer> batchSizes = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Told the number of inputs of every inference, before it runs (a test's scripted cost per batch size). */
    public volatile IntConsumer inferences = size -> { };
    /** With {@link #batches}: the batch size the load's probe preferred ({@code 0}: none, batching pays). */
    public volatile int preferredBatch;
    volatile boolean closed;
    volatile String refusedPrefix;
    volatile Semaphore probeGate;
    final AtomicInteger probesWaiting = new AtomicInteger();
    /** Opens every {@code "hang"} predictor. */
    final java.util.concurrent.CountDownLatch hang = new java.util.concurrent.CountDownLatch(1);
    /** Predictors inside {@code predict} now. */
    final AtomicInteger inside = new AtomicInteger();
    /** Interrupts a {@code "hang"} predictor ignored. */
    final AtomicInteger ignoredInterrupts = new AtomicInteger();
    volatile boolean closedWhilePredicting;
    /** Whether the model has a wide session (set before the pool starts). */
    public volatile boolean widens;
    /** The inputs run widened, in the order they started. */
    public final java.util.List<String> widened = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Set when a widened inference and any other inference were inside the model at the same time. */
    public volatile boolean wideOverlap;
    /**
     * The most tokens one input has ({@link #maxInputTokens}); 0 (the default): the model reads no tokens. An input's
     * tokens are its characters, at most this many (truncation).
     */
    public volatile long maxInputTokens;
    /** Every input its predictors tokenised ({@link Predictor#tokens}), in order. */
    public final java.util.List<String> tokenised = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Every input whose inference was handed the tokens counted for it, in order. */
    public final java.util.List<String> ranCounted = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public long maxInputTokens() {
        return maxInputTokens;
    }

    /** What {@link #waitsOnOtherDeployments} answers: true stands for a composite model waiting on a step. */
    volatile boolean waitsOnOthers;

    @Override
    public boolean waitsOnOtherDeployments() {
        return waitsOnOthers;
    }

    /** The inputs whose size the engine asked ({@link #inputSize}), in order. */
    public final java.util.List<String> sized = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** A text's length, as the text models answer. */
    @Override
    public long inputSize(String input) {
        sized.add(input);
        return input.length();
    }

    /** What {@link #requestFailuresMarkUnhealthy} answers: false stands for the composite kinds (user code). */
    volatile boolean failuresMarkUnhealthy = true;

    @Override
    public boolean requestFailuresMarkUnhealthy() {
        return failuresMarkUnhealthy;
    }
    private final AtomicInteger insideWide = new AtomicInteger();

    @Override
    public boolean widens() {
        return widens;
    }

    @Override
    public dev.serval.request.TensorIO<String, String> io() {
        return new dev.serval.request.TensorIO<>() {
            @Override
            public List<String> inputs(dev.serval.tensor.Tensors request) {
                return dev.serval.request.TextIO.texts(request);
            }

            @Override
            public dev.serval.tensor.Tensors outputs(List<String> outputs) {
                return new dev.serval.tensor.Tensors(List.of(dev.serval.tensor.Tensor.of("upper",
                        outputs.toArray(String[]::new), outputs.size())));
            }
        };
    }

    @Override
    public ModelSignature signature() {
        return new ModelSignature("fake",
                List.of(new TensorSignature("text", "BYTES", List.of(-1L))),
                List.of(new TensorSignature("upper", "BYTES", List.of(-1L))));
    }

    @Override
    public BatchingDecision batching() {
        if (!batches) {
            return BatchingDecision.single("fake: one at a time");
        }
        BatchingDecision batched = new BatchingDecision(true, true, "fake: batches");
        int preferred = preferredBatch;
        return preferred > 0 ? batched.withPreferredBatch(preferred, "fake: probed") : batched;
    }

    @Override
    public Predictor<String, String> newPredictor() {
        openPredictors.incrementAndGet();
        return new Predictor<>() {
            private boolean wide;

            @Override
            public void widen(boolean wide) {
                this.wide = wide;
            }

            @Override
            public java.util.List<String> predictBatch(java.util.List<String> inputs) throws Exception {
                batchSizes.add(inputs.size());
                inferences.accept(inputs.size());
                java.util.List<String> outputs = new java.util.ArrayList<>();
                for (String input : inputs) {
                    outputs.add(predictOne(input));
                }
                return outputs;
            }

            @Override
            public dev.serval.model.InputTokens tokens(String input) {
                tokenised.add(input);
                int count = (int) Math.min(input.length(), maxInputTokens);
                return () -> count;
            }

            @Override
            public java.util.List<String> predictBatch(java.util.List<String> inputs,
                    java.util.List<dev.serval.model.InputTokens> tokens) throws Exception {
                for (int i = 0; i < tokens.size(); i++) {
                    if (tokens.get(i) != null) {
                        ranCounted.add(inputs.get(i));
                    }
                }
                return predictBatch(inputs);
            }

            @Override
            public String predict(String input, dev.serval.model.InputTokens tokens,
                    java.util.function.BooleanSupplier abandoned) throws Exception {
                if (tokens != null) {
                    ranCounted.add(input);
                }
                return predict(input, abandoned);
            }

            @Override
            public String predict(String input) throws Exception {
                inferences.accept(1);
                return predictOne(input);
            }

            private String predictOne(String input) throws Exception {
                boolean running = wide; // both sides announce themselves, then look: one of two overlapping sees the other
                if (running) {
                    insideWide.incrementAndGet();
                    widened.add(input);
                }
                int concurrent = inside.incrementAndGet();
                if (running ? concurrent > 1 : insideWide.get() > 0) {
                    wideOverlap = true;
                }
                try {
                    return run(input);
                } finally {
                    inside.decrementAndGet();
                    if (running) {
                        insideWide.decrementAndGet();
                    }
                }
            }

            private String run(String input) throws Exception {
                threads.add(Thread.currentThread().getName());
                reached.add(input);
                if (input.startsWith("wait")) {
                    waiting.incrementAndGet();
                    gate.acquire();
                }
                Semaphore probes = probeGate;
                if (input.equals("probe") && probes != null) {
                    probesWaiting.incrementAndGet();
                    probes.acquire();
                }
                String refused = refusedPrefix;
                if (refused != null && input.startsWith(refused)) {
                    throw new IllegalStateException("the model cannot run '" + input + "'");
                }
                if (input.equals("hang")) {
                    waiting.incrementAndGet();
                    awaitIgnoringInterrupts(hang);
                }
                if (input.equals("reject")) {
                    throw new InvalidInput("text 'reject' is refused by the model");
                }
                if (input.equals("probe") && (allProbesFail || doomed.contains(replicaId()))) {
                    throw new IllegalStateException("doomed replica");
                }
                if (input.equals("boom")) {
                    throw new IllegalStateException("boom");
                }
                predictions.incrementAndGet();
                return input.toUpperCase();
            }

            @Override
            public void close() {
                openPredictors.decrementAndGet();
            }
        };
    }

    private static long replicaId() {
        String name = Thread.currentThread().getName();
        int r = name.lastIndexOf("-r");
        return Long.parseLong(name.substring(r + 2, name.indexOf('-', r + 2)));
    }

    /** Waits (up to 10 s, else fails) until {@code count} predictors have been held by {@code "wait"} inputs. */
    public void awaitWaiting(int count) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (waiting.get() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waiting stayed at " + waiting.get() + ", expected " + count);
            }
            Thread.yield();
        }
    }

    @Override
    public String probeInput() {
        return "probe";
    }

    @Override
    public void validate(String input, int index) {
        if (input.equals("bad")) {
            throw new InvalidInput("text " + index + " is bad");
        }
        String refused = refusedPrefix;
        if (refused != null && input.startsWith(refused)) {
            throw new InvalidInput("text " + index + " starts with '" + refused + "'");
        }
    }

    @Override
    public void close() {
        if (inside.get() > 0) {
            closedWhilePredicting = true;
        }
        closed = true;
    }

    private void awaitIgnoringInterrupts(java.util.concurrent.CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                ignoredInterrupts.incrementAndGet();
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
