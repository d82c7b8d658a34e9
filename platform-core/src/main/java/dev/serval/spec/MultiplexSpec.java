package dev.serval.spec;

import java.util.regex.Pattern;

/**
 * How a multiplexed deployment holds the models it serves: a deployment whose {@code model} is a glob over the
 * repository's model names ({@code t-*}) serves every model that matches, loading each on its first request and
 * unloading the least recently used one to stay within these bounds (Ray Serve's model multiplexing).
 *
 * @param maxModelsPerReplica models one replica holds at once; default 4
 * @param maxModelMemory      bytes the deployment's loaded models may take together (estimated by the size of their
 *                            files), or 0 for no bound beyond the count; default 0
 */
public record MultiplexSpec(int maxModelsPerReplica, long maxModelMemory) {

    public static final IntRange MAX_MODELS_PER_REPLICA = new IntRange("max_models_per_replica", 1, 1024);
    /** The largest {@code max_model_memory}: a petabyte, far above any machine, and far from overflowing sums. */
    public static final long MAX_MODEL_MEMORY_LIMIT = 1L << 50;

    public static final MultiplexSpec DEFAULTS = new MultiplexSpec(4, 0);

    public MultiplexSpec {
        MAX_MODELS_PER_REPLICA.check(maxModelsPerReplica);
        if (maxModelMemory < 0 || maxModelMemory > MAX_MODEL_MEMORY_LIMIT) {
            throw new InvalidSpec("max_model_memory", "must be between 0 (no bound) and " + MAX_MODEL_MEMORY_LIMIT
                    + " bytes, not " + maxModelMemory);
        }
    }

    /** Whether a deployment's {@code model} is a glob (holds {@code *} or {@code ?}), i.e. the deployment multiplexes. */
    public static boolean isGlob(String model) {
        return model.indexOf('*') >= 0 || model.indexOf('?') >= 0;
    }

    /**
     * The pattern of a glob: {@code *} matches any run of characters, {@code ?} any one; everything else matches
     * itself.
     */
    public static Pattern glob(String glob) {
        StringBuilder regex = new StringBuilder(glob.length() + 8);
        StringBuilder literal = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*' || c == '?') {
                if (!literal.isEmpty()) {
                    regex.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                regex.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) {
            regex.append(Pattern.quote(literal.toString()));
        }
        return Pattern.compile(regex.toString());
    }
}
