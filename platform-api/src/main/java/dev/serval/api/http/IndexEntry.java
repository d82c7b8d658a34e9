package dev.serval.api.http;

/**
 * One model version of the repository index ({@code POST /v2/repository/index}, gRPC {@code RepositoryIndex}), which
 * REST and gRPC both render.
 *
 * @param state  {@code READY}, {@code LOADING} or {@code UNAVAILABLE}
 * @param reason why it is not READY (empty when there is nothing to say)
 */
public record IndexEntry(String name, String version, String state, String reason) {}
