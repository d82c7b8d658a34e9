package dev.serval.cache;

import dev.serval.metrics.DeploymentMetrics;
import dev.serval.spec.CacheSpec;
import dev.serval.spec.DeploymentStatus;
import io.micrometer.core.instrument.Counter;

/**
 * One deployment's result cache as its settings make it: on or off ({@code cache}), bound by its share of the
 * server's ceiling ({@link CacheBudget}), and its meters: {@code serval.cache.requests{result=hit|miss|coalesced}}
 * (per input), {@code serval.cache.bytes} and {@code serval.cache.evictions}.
 *
 * <p>Design. The request path reads {@link #current()} once per request: null while the cache is off or the model's
 * kind does not cache (a tensor model), so that a deployment without a cache pays one volatile read and one branch.
 * Settings change under this object's lock ({@link #configure}, {@link #close}, from the edge's threads and the
 * deployment's close); turning the cache off drops its entries at once, turning it on starts an empty one. The budget
 * hands out bounds under its own lock ({@link #grant}), which never takes this one, so the two locks never nest the
 * other way round. Counters are Micrometer's (striped adders); the byte gauge reads Caffeine's weighted size.
 */
public final class DeploymentCache<O> implements CacheBudget.Member {

    private final boolean cacheable;
    private final CacheBudget budget;
    private final Counter hits;
    private final Counter misses;
    private final Counter coalesced;
    private final Counter evictions;
    /** The cache while on, else null: written under this object's lock, read by requests. */
    private volatile ResultCache<O> current;
    /** The settings, written under this object's lock. */
    private volatile CacheSpec spec;
    /** The bound the budget granted, written under the budget's lock. */
    private volatile long granted;
    private boolean closed;

    /**
     * @param cacheable whether the deployment's kind caches (the text kinds); when false nothing is created or metered
     * @param spec      the deployment's settings
     */
    public DeploymentCache(boolean cacheable, CacheSpec spec, CacheBudget budget, DeploymentMetrics metrics) {
        this.cacheable = cacheable;
        this.budget = budget;
        this.spec = spec;
        if (cacheable) {
            String what = "Inputs looked up in the result cache: hit, miss (run by the model), coalesced (waited for "
                    + "an identical input already running)";
            this.hits = metrics.counter("serval.cache.requests", what, "result", "hit");
            this.misses = metrics.counter("serval.cache.requests", what, "result", "miss");
            this.coalesced = metrics.counter("serval.cache.requests", what, "result", "coalesced");
            this.evictions = metrics.counter("serval.cache.evictions", "Result cache entries evicted for size");
            metrics.gauge("serval.cache.bytes", "Bytes of keys and results the result cache holds",
                    this, cache -> cache.status().bytes());
        } else {
            this.hits = null;
            this.misses = null;
            this.coalesced = null;
            this.evictions = null;
        }
        configure(spec);
    }

    /** The cache to look inputs up in, or null while there is none (off, or a kind that does not cache). */
    public ResultCache<O> current() {
        return current;
    }

    /** Takes new settings: turns the cache on or off, or asks the budget for another bound. */
    public synchronized void configure(CacheSpec next) {
        spec = next;
        if (!cacheable || closed) {
            return;
        }
        if (!next.enabled()) {
            ResultCache<O> dropped = current;
            current = null;
            budget.leave(this);
            if (dropped != null) {
                dropped.clear();
            }
            return;
        }
        if (current == null) {
            current = new ResultCache<>(0, evictions::increment);
        }
        budget.join(this); // grants the bound, resizing the cache
    }

    /** Drops the cache and gives its share back. Idempotent. */
    public synchronized void close() {
        closed = true;
        ResultCache<O> dropped = current;
        current = null;
        budget.leave(this);
        if (dropped != null) {
            dropped.clear();
        }
    }

    @Override
    public long wanted() {
        return spec.maxBytes();
    }

    @Override
    public void grant(long bytes) {
        granted = bytes;
        ResultCache<O> cache = current;
        if (cache != null) {
            cache.resize(bytes);
        }
    }

    /** Counts one request's inputs by how they were answered. */
    public void counted(int hit, int miss, int waited) {
        if (hit > 0) {
            hits.increment(hit);
        }
        if (miss > 0) {
            misses.increment(miss);
        }
        if (waited > 0) {
            coalesced.increment(waited);
        }
    }

    /** The cache now: whether it is active, its granted bound, its size, and its lookups so far. */
    public DeploymentStatus.Cache status() {
        ResultCache<O> cache = current;
        long hit = hits == null ? 0 : (long) hits.count();
        long lookups = hits == null ? 0 : hit + (long) misses.count() + (long) coalesced.count();
        return cache == null ? new DeploymentStatus.Cache(false, 0, 0, 0, hit, lookups)
                : new DeploymentStatus.Cache(true, granted, cache.bytes(), cache.entries(), hit, lookups);
    }
}
