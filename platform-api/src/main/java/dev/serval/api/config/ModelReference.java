package dev.serval.api.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A deployment's model as its loader sees it: the model's name in the repository plus the loader options that change
 * what is loaded. It travels inside the core spec as one string ({@link #text()}, which is {@code DeploymentSpec.model()}),
 * so that a change of any option rolls the replicas as a new version does, and the loader reads it back from the
 * spec it was handed ({@link #parse}), never from whatever config is current when the load runs.
 *
 * @param model          the model's name, as the config gives it
 * @param maxLength      tokens kept per text, or 0 for the model descriptor's {@code max_length}
 * @param longInputs     {@code truncate} or {@code chunk}
 * @param chunkOverlap   tokens each window shares with the previous one, when chunking
 * @param chunkReduction how a classifier combines the scores of a chunked text: {@code mean} or {@code max}
 * @param maxChunksPerInput windows one text may split into, when chunking
 */
public record ModelReference(String model, int maxLength, String longInputs, int chunkOverlap, String chunkReduction,
        int maxChunksPerInput) {

    public ModelReference {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(longInputs, "longInputs");
        Objects.requireNonNull(chunkReduction, "chunkReduction");
    }

    /** The model name, then {@code ?} and the options as {@code key=value} pairs joined by {@code &}. */
    public String text() {
        return model + "?max_length=" + maxLength + "&long_inputs=" + longInputs + "&chunk_overlap=" + chunkOverlap
                + "&chunk_reduction=" + chunkReduction + "&max_chunks_per_input=" + maxChunksPerInput;
    }

    /**
     * The reference {@link #text()} wrote. Options never hold {@code ?}, so the last one separates them from the
     * model name, whatever that name holds.
     *
     * @throws IllegalArgumentException when {@code text} was not written by {@link #text()}
     */
    public static ModelReference parse(String text) {
        int query = text.lastIndexOf('?');
        if (query < 0) {
            throw new IllegalArgumentException("model reference '" + text + "' has no loader options");
        }
        Map<String, String> options = new LinkedHashMap<>();
        for (String pair : text.substring(query + 1).split("&")) {
            int equals = pair.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("model reference '" + text + "': '" + pair + "' is not key=value");
            }
            options.put(pair.substring(0, equals), pair.substring(equals + 1));
        }
        try {
            return new ModelReference(text.substring(0, query), Integer.parseInt(option(options, "max_length", text)),
                    option(options, "long_inputs", text), Integer.parseInt(option(options, "chunk_overlap", text)),
                    option(options, "chunk_reduction", text),
                    Integer.parseInt(option(options, "max_chunks_per_input", text)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("model reference '" + text + "': " + e.getMessage(), e);
        }
    }

    private static String option(Map<String, String> options, String key, String text) {
        String value = options.get(key);
        if (value == null) {
            throw new IllegalArgumentException("model reference '" + text + "' lacks option " + key);
        }
        return value;
    }
}
