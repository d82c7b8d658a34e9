package dev.serval.spec;

/**
 * A deployment's result cache ({@code cache}): exact per-input results of a text model, looked up before routing
 * (docs/configuration.md, "Result cache"). Only the text kinds cache; the setting is kept, and ignored, for the others.
 * Changing it never rolls the replicas: the cache is resized, emptied or created in place.
 *
 * @param enabled  whether results are cached ({@code cache: off} turns it off); default true
 * @param maxBytes bytes of keys and values the deployment's cache may hold ({@code max_bytes}), within the server's
 *                 {@code serval.cache.max-bytes} shared by every deployment; default 64Mi
 */
public record CacheSpec(boolean enabled, long maxBytes) {

    /** The smallest {@code max_bytes}: one entry of a long text or a wide vector. */
    public static final long MIN_BYTES = 1L << 16;
    /** The largest {@code max_bytes}: a terabyte, far above any heap. */
    public static final long MAX_BYTES = 1L << 40;
    public static final long DEFAULT_MAX_BYTES = 64L << 20;

    public static final CacheSpec DEFAULTS = new CacheSpec(true, DEFAULT_MAX_BYTES);

    public CacheSpec {
        if (maxBytes < MIN_BYTES || maxBytes > MAX_BYTES) {
            throw new InvalidSpec("cache.max_bytes", "must be between " + MIN_BYTES + " (64Ki) and " + MAX_BYTES
                    + " (1Ti) bytes, not " + maxBytes);
        }
    }

    /** These settings with the cache off (its size kept, for when it is turned on again). */
    public CacheSpec off() {
        return enabled ? new CacheSpec(false, maxBytes) : this;
    }
}
