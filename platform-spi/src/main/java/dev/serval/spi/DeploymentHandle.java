package dev.serval.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Another deployment, called in-process: the call goes through that deployment's router and admission like an HTTP
 * request (its queue bound, its refusals), carries the calling request's deadline and id, and passes tensors without
 * copying or encoding them. When the calling request ends early (its client went away, its deadline passed), the
 * calls it started are cancelled. Thread-safe; obtained once from {@link HandlerContext#deployment}.
 */
public interface DeploymentHandle {

    /** The deployment's name. */
    String name();

    /**
     * Sends {@code inputs} to the deployment on behalf of {@code caller}.
     *
     * @return completed with the deployment's output tensors, or exceptionally with the reason it refused or failed
     *     (its message names the deployment); blocking on it ({@code join()}) from {@link Handler#handle} is allowed
     */
    CompletableFuture<List<Tensor>> infer(Request caller, List<Tensor> inputs);
}
