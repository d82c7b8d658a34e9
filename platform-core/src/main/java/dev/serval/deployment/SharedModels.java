package dev.serval.deployment;

import dev.serval.metrics.DeploymentMetrics;
import dev.serval.predictor.Model;
import dev.serval.spec.DeploymentSpec;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * One deployment's loaded models, one per version, reference-counted by the replicas using them: the weights of a
 * version are loaded once, however many replicas start, and closed when its last replica stops. Launcher threads
 * only; the lock guards the map and counts and is never held while a model loads.
 */
final class SharedModels<I, O> {

    private final Map<String, Entry<I, O>> byVersion = new HashMap<>();

    /** The model for {@code spec}'s version, loading it if no replica holds it; blocks while it loads. */
    Model<I, O> acquire(DeploymentSpec spec, ModelLoader<I, O> loader, DeploymentMetrics metrics) throws Exception {
        Entry<I, O> entry;
        boolean load;
        synchronized (this) {
            entry = byVersion.computeIfAbsent(key(spec), version -> new Entry<>());
            entry.references++;
            load = entry.model == null;
            if (load) {
                entry.model = new CompletableFuture<>();
            }
        }
        if (load) {
            try {
                long start = System.nanoTime();
                entry.model.complete(loader.load(spec));
                metrics.modelLoaded(System.nanoTime() - start);
            } catch (Throwable t) {
                entry.model.completeExceptionally(t);
            }
        }
        try {
            return entry.model.get();
        } catch (ExecutionException e) {
            release(key(spec));
            Throwable cause = e.getCause();
            while (cause instanceof CompletionException && cause.getCause() != null) {
                cause = cause.getCause();
            }
            throw cause instanceof Exception exception ? exception : e;
        }
    }

    /**
     * What identifies one loaded model: every field of the spec a {@link ModelLoader} may read (the model reference
     * with its loader options, the version, the intra-op threads its session runs with, and whether it is batch
     * invariant). Replicas whose specs differ in any of them get their own model, so that a change of one of them
     * never hands new replicas the session the old ones run.
     */
    static String key(DeploymentSpec spec) {
        return spec.model() + "@" + spec.version() + "/intra-op=" + spec.intraOpThreads()
                + (spec.batchInvariance() ? "" : "/not-invariant");
    }

    /** Gives back one reference (by {@link #key}); the last one closes the model. */
    void release(String version) {
        Entry<I, O> entry;
        synchronized (this) {
            entry = byVersion.get(version);
            if (entry == null || --entry.references > 0) {
                return;
            }
            byVersion.remove(version);
        }
        if (entry.model.isDone() && !entry.model.isCompletedExceptionally()) {
            entry.model.join().close();
        }
    }

    private static final class Entry<I, O> {
        int references;
        CompletableFuture<Model<I, O>> model;
    }
}
