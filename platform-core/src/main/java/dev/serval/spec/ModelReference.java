package dev.serval.spec;

import dev.serval.model.ChunkReduction;
import dev.serval.model.LongInputs;
import java.util.Objects;

/**
 * A deployment's model as its loader sees it: the model's name plus the loader options that change what is loaded.
 * Record equality is what matters: replicas whose specs hold equal references (and versions, see {@code SharedModels})
 * share one loaded model, and a change of any component rolls the replicas as a new version does
 * ({@link DeploymentSpec#sameReplicaShape}). A loader reads the reference of the spec it was handed, never whatever
 * config is current when the load runs.
 *
 * @param name              the model's name, e.g. {@code all-minilm-l6-v2} (a repository model) or {@code fake:}
 * @param maxLength         tokens kept per text, or 0 for the model descriptor's {@code max_length}; default 0
 * @param longInputs        texts over the maximum length: truncated or chunked; default {@link LongInputPolicy#TRUNCATE}
 * @param chunkOverlap      tokens each window shares with the previous one, when chunking (at most half of a non-zero
 *                          {@code maxLength}); default 32
 * @param chunkReduction    how a classifier combines the scores of a chunked text; default {@link ChunkReduction#MEAN}
 * @param maxChunksPerInput windows one text may split into, when chunking; default {@value LongInputs#DEFAULT_MAX_CHUNKS}
 */
public record ModelReference(String name, int maxLength, LongInputPolicy longInputs, int chunkOverlap,
        ChunkReduction chunkReduction, int maxChunksPerInput) {

    public static final IntRange MAX_LENGTH = new IntRange("max_length", 0, 1_000_000);
    public static final IntRange CHUNK_OVERLAP = new IntRange("chunk_overlap", 0, 1_000_000);
    public static final IntRange MAX_CHUNKS_PER_INPUT = new IntRange("max_chunks_per_input", 1,
            LongInputs.MAX_CHUNKS_LIMIT);

    public ModelReference {
        Objects.requireNonNull(name, "model");
        Objects.requireNonNull(longInputs, "long_inputs");
        Objects.requireNonNull(chunkReduction, "chunk_reduction");
        if (name.isBlank()) {
            throw new InvalidSpec("model", "must not be blank");
        }
        MAX_LENGTH.check(maxLength);
        if (maxLength == 1) {
            throw new InvalidSpec("max_length", "must be 0 (the model's own) or at least 2");
        }
        CHUNK_OVERLAP.check(chunkOverlap);
        if (longInputs == LongInputPolicy.CHUNK && maxLength > 0 && chunkOverlap > maxLength / 2) {
            throw new InvalidSpec("chunk_overlap", "is " + chunkOverlap + " but must be at most half of max_length ("
                    + maxLength + ")");
        }
        MAX_CHUNKS_PER_INPUT.check(maxChunksPerInput);
    }

    /** The model {@code name} with the default loader options. */
    public static ModelReference named(String name) {
        return new ModelReference(name, 0, LongInputPolicy.TRUNCATE, 32, ChunkReduction.MEAN,
                LongInputs.DEFAULT_MAX_CHUNKS);
    }
}
