package dev.serval.deployment;

import dev.serval.metrics.DeploymentMetrics;
import dev.serval.model.Model;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.ModelReference;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * One deployment's loaded models, one per version, reference-counted by the replicas using them: the weights of a
 * version are loaded once, however many replicas start, and closed when its last replica stops. A replica whose
 * predictor thread never left the model (hung in native code) releases its reference with {@link #releaseLeaked}: the
 * model is then never closed, since freeing its native session under a running thread would crash the JVM; the leak
 * is logged when the last reference goes. Launcher threads only; the lock guards the map, counts and leak flags and is
 * never held while a model loads or closes.
 */
final class SharedModels<I, O> {

    private static final System.Logger LOG = System.getLogger(SharedModels.class.getName());

    private final Map<Key, Entry<I, O>> loaded = new HashMap<>();

    /** The model for {@code spec}'s version, loading it if no replica holds it; blocks while it loads. */
    Model<I, O> acquire(DeploymentSpec spec, ModelLoader<I, O> loader, DeploymentMetrics metrics) throws Exception {
        return acquire(key(spec), spec, loader, metrics);
    }

    /** The model under {@code key} ({@link #key(DeploymentSpec, ModelLoader, long)}), loading it if nobody holds it. */
    Model<I, O> acquire(Key key, DeploymentSpec spec, ModelLoader<I, O> loader, DeploymentMetrics metrics)
            throws Exception {
        Entry<I, O> entry;
        boolean load;
        synchronized (this) {
            entry = loaded.computeIfAbsent(key, model -> new Entry<>());
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
            release(key);
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
    static Key key(DeploymentSpec spec) {
        return new Key(spec.model(), spec.version(), spec.predictors().intraOpThreads(),
                spec.batching().batchInvariance(), 0);
    }

    /** {@link #key}, or for a loader that loads per replica ({@link ModelLoader#perReplica}), replica {@code id}'s own. */
    static Key key(DeploymentSpec spec, ModelLoader<?, ?> loader, long replica) {
        Key shared = key(spec);
        return loader.perReplica() ? new Key(shared.model, shared.version, shared.intraOpThreads,
                shared.batchInvariance, replica) : shared;
    }

    /**
     * {@link #key}: the model reference (name and loader options), version, intra-op threads and batch invariance;
     * {@code replica} is the one replica whose model it is, or 0 when shared.
     */
    record Key(ModelReference model, String version, int intraOpThreads, boolean batchInvariance, long replica) {

        /** As the logs name a model: {@code all-minilm-l6-v2@1}. */
        @Override
        public String toString() {
            return model.name() + "@" + version;
        }
    }

    /** Gives back one reference (by {@link #key}); the last one closes the model, unless a reference leaked it. */
    void release(Key model) {
        release(model, null);
    }

    /**
     * Gives back the reference of {@code replica}, a predictor thread of which is still inside the model: the model is
     * never closed, even when other replicas release it later.
     */
    void releaseLeaked(Key model, String replica) {
        release(model, replica);
    }

    private void release(Key model, String leakedBy) {
        Entry<I, O> entry;
        String leaked;
        synchronized (this) {
            entry = loaded.get(model);
            if (entry == null) {
                return;
            }
            if (leakedBy != null && entry.leakedBy == null) {
                entry.leakedBy = leakedBy;
            }
            if (--entry.references > 0) {
                return;
            }
            loaded.remove(model);
            leaked = entry.leakedBy;
        }
        if (!entry.model.isDone() || entry.model.isCompletedExceptionally()) {
            return;
        }
        if (leaked != null) {
            LOG.log(System.Logger.Level.WARNING, "model {0} is left open, not closed: a predictor thread of replica {1} "
                    + "never left it; its memory is freed only when the process exits", model, leaked);
            return;
        }
        entry.model.join().close();
    }

    private static final class Entry<I, O> {
        int references;
        /** The first replica that left a thread inside the model, or null. */
        String leakedBy;
        CompletableFuture<Model<I, O>> model;
    }
}
