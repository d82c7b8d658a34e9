package dev.serval.multiplex;

import dev.serval.multiplex.Multiplexer.Entry;
import dev.serval.multiplex.Multiplexer.Hosting;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Spreads hot models onto more replicas and takes replicas back from cooled ones, as Ray Serve routes a model's
 * overflow to replicas that then load it.
 *
 * <p>Design. {@link #balance} runs on the refresher thread every {@link #BALANCE_PERIOD}, under the
 * {@link ModelTable#lock}. A model whose replicas are all full (requests wait in its queue) is loaded on one more
 * replica that has room ({@link Placer#tryPlace} with no added bytes: the replicas of a model share its weights); a
 * model whose load has fallen to what one replica fewer serves at half its capacity, for {@link #CALM_PERIOD}, gives
 * its last-added replica back (its other replicas take its requests). So the deployment's replica count (fixed, or
 * the autoscaler's, on the sum of its models' requests) bounds both how many models it holds and how far a hot one
 * spreads. An entry's {@code calmSince} is written here and cleared by every unload, all under the lock. The load
 * figures ({@link Hosting#queued}, {@link Hosting#ongoing}) are read without coordination: a period's decision is
 * best-effort and the next period corrects it. Each run also retries the models waiting for room, since a residency
 * that ended is announced by no release.
 */
final class Spreader<H> {

    /** The multiplexer's log category: one for everything a multiplexed deployment's models go through. */
    private static final System.Logger LOG = System.getLogger(Multiplexer.class.getName());
    /** How often hot models spread and cooled ones give replicas back. */
    static final Duration BALANCE_PERIOD = Duration.ofMillis(200);
    /** How long a spread model's load must stay low before it gives a replica back. */
    static final Duration CALM_PERIOD = Duration.ofSeconds(5);

    private final ModelTable<H> table;
    private final Hosting<H> hosting;
    private final Placer<H> placer;
    private final LongSupplier nanoTime;

    Spreader(ModelTable<H> table, Placer<H> placer, LongSupplier nanoTime) {
        this.table = table;
        this.hosting = table.hosting();
        this.placer = placer;
        this.nanoTime = nanoTime;
    }

    /** Refresher thread: {@link #balance}, logged instead of thrown (a throw would end the schedule). */
    void run() {
        try {
            balance();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "deployment '" + table.deployment() + "': balancing the models failed",
                    e);
        }
    }

    /** Spreads hot models and takes replicas back from cooled ones (see the class comment); under the lock. */
    void balance() {
        synchronized (table.lock) {
            if (table.closed()) {
                return;
            }
            long now = nanoTime.getAsLong();
            for (Entry<H> entry : table.models().values()) {
                int[] held = entry.held;
                int count = held.length;
                if (count == 0) {
                    continue;
                }
                H handle = entry.handle;
                if (hosting.queued(handle) > 0 && hosting.serving(handle) >= count && count < table.replicas()) {
                    entry.calmSince = 0;
                    if (placer.tryPlace(entry, 0)) {
                        LOG.log(System.Logger.Level.INFO, "deployment ''{0}'': model ''{1}'' is busy on {2} "
                                + "replica(s); loading it on one more", table.deployment(), entry.model, count);
                    }
                } else if (count > 1
                        && hosting.ongoing(handle) * 2L <= (long) (count - 1) * hosting.capacity(handle)) {
                    if (entry.calmSince == 0) {
                        entry.calmSince = now;
                    } else if (now - entry.calmSince >= CALM_PERIOD.toNanos()) {
                        placer.unloadFrom(entry, held[count - 1]); // its other replicas take its requests
                    }
                } else {
                    entry.calmSince = 0;
                }
            }
            if (placer.waitingCount() > 0) {
                placer.retryWaiting(); // a residency may have ended: no release says so
            }
        }
    }
}
