package dev.serval.spec;

/**
 * How a multiplexed deployment holds the models it serves: a deployment whose {@code model} is a glob over the
 * repository's model names ({@code t-*}) serves every model that matches, loading each on its first request and
 * unloading the least recently used one to stay within these bounds (Ray Serve's model multiplexing).
 *
 * <p>A deployment of one model has multiplexing {@link #OFF}: an explicit value, not null, so that no reader
 * null-checks; it equals no setting of multiplexing on.
 *
 * @param enabled             whether the deployment multiplexes (its model is a glob); false only in {@link #OFF}
 * @param maxModelsPerReplica models one replica holds at once; default 4
 * @param maxModelMemory      bytes the deployment's loaded models may take together (estimated by the size of their
 *                            files), or 0 for no bound beyond the count; default 0
 */
public record MultiplexSpec(boolean enabled, int maxModelsPerReplica, long maxModelMemory) {

    public static final IntRange MAX_MODELS_PER_REPLICA = new IntRange("max_models_per_replica", 1, 1024);
    /** The largest {@code max_model_memory}: a petabyte, far above any machine, and far from overflowing sums. */
    public static final long MAX_MODEL_MEMORY_LIMIT = 1L << 50;

    public static final MultiplexSpec DEFAULTS = new MultiplexSpec(4, 0);

    /**
     * Multiplexing off: a deployment of one model. The one off value, holding the defaults' settings (which the
     * config's field table reads as the defaults of a glob's deployment), so that off always equals off.
     */
    public static final MultiplexSpec OFF = new MultiplexSpec(false, 4, 0);

    public MultiplexSpec {
        if (!enabled && OFF != null) { // OFF itself is built while OFF is still null
            throw new IllegalArgumentException("multiplexing off is MultiplexSpec.OFF, whose settings do not change");
        }
        MAX_MODELS_PER_REPLICA.check(maxModelsPerReplica);
        if (maxModelMemory < 0 || maxModelMemory > MAX_MODEL_MEMORY_LIMIT) {
            throw new InvalidSpec("max_model_memory", "must be between 0 (no bound) and " + MAX_MODEL_MEMORY_LIMIT
                    + " bytes, not " + maxModelMemory);
        }
    }

    /** Multiplexing on with these settings. */
    public MultiplexSpec(int maxModelsPerReplica, long maxModelMemory) {
        this(true, maxModelsPerReplica, maxModelMemory);
    }

    /** Whether a deployment's {@code model} is a glob (holds {@code *} or {@code ?}), i.e. the deployment multiplexes. */
    public static boolean isGlob(String model) {
        return model.indexOf('*') >= 0 || model.indexOf('?') >= 0;
    }

    /**
     * Whether {@code name} matches {@code glob}: {@code *} matches any run of characters, {@code ?} any one, and
     * everything else itself. Names come from clients: no regex and no backtracking over them. One pass that keeps only
     * the last star as its restart point (a later star makes every earlier split irrelevant), as in Russ Cox's "Glob
     * Matching Can Be Simple And Fast Too" (2017): at most {@code glob.length() × name.length()} steps, linear in the
     * name for a given glob, allocating nothing.
     */
    public static boolean matches(String glob, String name) {
        int g = 0;
        int n = 0;
        int starG = -1; // the glob position after the last star seen, or -1
        int starN = 0;  // the name position that star's run ends at so far
        while (g < glob.length() || n < name.length()) {
            if (g < glob.length()) {
                char c = glob.charAt(g);
                if (c == '*') {
                    starG = ++g;
                    starN = n;
                    continue;
                }
                if (n < name.length() && (c == '?' || c == name.charAt(n))) {
                    g++;
                    n++;
                    continue;
                }
            }
            if (starG >= 0 && starN < name.length()) {
                g = starG; // the last star takes one more character and the rest is tried again
                n = ++starN;
                continue;
            }
            return false;
        }
        return true;
    }
}
