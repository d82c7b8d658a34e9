package dev.serval.spec;

/**
 * A deployment's result cache as it is now; an immutable snapshot, read at once.
 *
 * @param active       whether lookups happen: the setting is on and the model is of a kind that caches (text)
 * @param grantedBytes the bound the cache holds to: its {@code max_bytes}, or less when the server's ceiling
 *                     ({@code serval.cache.max-bytes}) is shared with other deployments; 0 while not active
 * @param bytes        bytes of keys and values held now (Caffeine's weighted size)
 * @param entries      entries held now (an estimate)
 * @param hits         inputs answered from the cache since the deployment was created
 * @param lookups      inputs looked up since then: hits, misses and those that waited for an identical one running
 */
public record CacheStatus(boolean active, long grantedBytes, long bytes, long entries, long hits, long lookups) {

    /** A deployment without a cache. */
    public static final CacheStatus INACTIVE = new CacheStatus(false, 0, 0, 0, 0, 0);
}
