package dev.serval.multiplex;

import dev.serval.multiplex.Multiplexer.Candidate;
import dev.serval.multiplex.Multiplexer.Catalog;
import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.multiplex.Multiplexer.Hosting;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Keeps a multiplexed deployment's models in step with the repository: rescans it ({@link Catalog}) and applies what
 * changed.
 *
 * <p>Design. {@link #refresh} runs on the refresher thread every {@code refreshPeriod}. It scans outside the lock (the
 * scan reads the file system), publishes the scan ({@link ModelTable#candidates}), then under the
 * {@link ModelTable#lock}: a model whose newest version changed rolls to it ({@link Hosting#update}); a model that
 * left the repository is retired once no request holds it (its pins go to {@link Entry#RETIRING} for good, so no
 * request pins it again) and leaves the table; a model whose load failed is unloaded once no request holds it (the
 * next request loads it again); then the {@link Trimmer} unloads what is over the bounds and the waiting models are
 * retried. A model that left is closed after the lock is released, on a closer thread ({@link #closer}): a close
 * drains the model's requests, which may take its graceful timeout, while the refresher goes on rescanning,
 * spreading and placing waiting models. {@link #closing} holds the closes under way (guarded by the lock) so that
 * {@link #awaitCloses} waits for them once no refresh runs any more.
 */
final class Refresher<H> {

    /** The multiplexer's log category: one for everything a multiplexed deployment's models go through. */
    private static final System.Logger LOG = System.getLogger(Multiplexer.class.getName());

    private final ModelTable<H> table;
    private final Hosting<H> hosting;
    private final Catalog catalog;
    private final Placer<H> placer;
    private final Trimmer<H> trimmer;
    /**
     * Closes the models that left the repository: a close drains the model's requests and may take its graceful
     * timeout, which must not stall the refresher (rescans, spreading, models waiting for room).
     */
    private final ExecutorService closer;
    /** The closes {@link #closer} runs now, which {@link #awaitCloses} waits for; guarded by the lock. */
    private final Set<CompletableFuture<Void>> closing = new HashSet<>();

    Refresher(ModelTable<H> table, Catalog catalog, Placer<H> placer, Trimmer<H> trimmer) {
        this.table = table;
        this.hosting = table.hosting();
        this.catalog = catalog;
        this.placer = placer;
        this.trimmer = trimmer;
        this.closer = Executors.newCachedThreadPool(Thread.ofPlatform()
                .name("serval-multiplex-close-" + table.deployment() + "-", 0).daemon(true).factory());
    }

    /** Refresher thread: rescans the catalog and applies what changed (see the class comment). Never throws. */
    void refresh() {
        try {
            Map<String, Candidate> scanned = Map.copyOf(catalog.scan());
            table.candidates(scanned);
            List<Entry<H>> gone = new ArrayList<>();
            synchronized (table.lock) {
                if (table.closed()) {
                    return;
                }
                Map<String, Entry<H>> models = table.models();
                Map<String, Entry<H>> next = new HashMap<>(models);
                for (Entry<H> entry : models.values()) {
                    Candidate candidate = scanned.get(entry.model);
                    if (candidate == null) {
                        if (entry.retire()) {
                            placer.forget(entry);
                            next.remove(entry.model);
                            gone.add(entry); // stays RETIRING: no request pins it again
                        }
                    } else if (!candidate.version().equals(entry.version)) {
                        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' rolls from version {2}"
                                + " to {3}", table.deployment(), entry.model, entry.version, candidate.version());
                        entry.version = candidate.version();
                        entry.bytes = candidate.bytes();
                        hosting.update(entry.handle, candidate.version());
                    } else if (entry.held.length > 0 && hosting.failed(entry.handle)) {
                        placer.unloadIfIdle(entry); // the next request loads it again
                    }
                }
                if (next.size() != models.size()) {
                    table.models(next);
                }
                trimmer.trim();
                placer.retryWaiting();
            }
            for (Entry<H> entry : gone) {
                LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' left the repository; closing it",
                        table.deployment(), entry.model);
                closeInBackground(entry);
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "deployment '" + table.deployment() + "': refreshing the models "
                    + "failed; trying again next period", e);
        }
    }

    /** Refresher thread: closes a model that left the repository on {@link #closer}, for {@link #awaitCloses}. */
    private void closeInBackground(Entry<H> entry) {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> hosting.close(entry.handle), closer);
        synchronized (table.lock) {
            closing.add(done);
        }
        done.whenComplete((ignored, failure) -> {
            if (failure != null) {
                LOG.log(System.Logger.Level.ERROR, "deployment '" + table.deployment() + "': closing model '"
                        + entry.model + "' failed", failure);
            }
            synchronized (table.lock) {
                closing.remove(done);
            }
        });
    }

    /**
     * Waits for the closes started in the background and stops the closer; once the refresher thread has stopped, so
     * that none starts after this.
     */
    void awaitCloses() {
        List<CompletableFuture<Void>> started;
        synchronized (table.lock) {
            started = List.copyOf(closing);
        }
        started.forEach(done -> done.exceptionally(failure -> null).join()); // a failure was logged
        closer.shutdown();
    }
}
