package dev.serval.deployment;

import dev.serval.error.NotReady;
import dev.serval.spec.DeploymentStatus;
import java.util.concurrent.CompletableFuture;

/**
 * Whether a deployment serves, as a future a caller can wait on ({@link Deployment#serving}): a deployment loaded on
 * demand is waited for this way. States: pending (loading, at zero, retrying a failed start), completed while a replica
 * serves, failed while its starts fail; a new pending future replaces a done one when the deployment stops serving or
 * retries, and a failed one ends it for good once the deployment closed ({@link #closed}).
 *
 * <p>Threads: {@link #published} runs on the controller thread (never after {@link #closed}: the deployment stops
 * calling it first), {@link #closed} on the closing thread; any thread reads {@link #current} (volatile).
 */
final class ServingSignal {

    private volatile CompletableFuture<Void> serving = new CompletableFuture<>();

    /** The future of now: read once per call; a later publication may replace it. */
    CompletableFuture<Void> current() {
        return serving;
    }

    /**
     * Controller thread: moves on with the deployment's latest {@code next} status, {@code reason} being why nothing
     * can serve with it ({@link NotServing#reason}), or null.
     */
    void published(DeploymentStatus next, String reason) {
        CompletableFuture<Void> current = serving;
        if (next.routable() > 0) {
            current.complete(null);
        } else if (reason != null && next.failedStarts() > 0) {
            current.completeExceptionally(new NotReady(reason));
        } else if (current.isDone()) {
            serving = new CompletableFuture<>(); // stopped serving, or retrying a failed start: wait for the next
        }
    }

    /** The deployment closed: every waiter, and every later one, gets {@code gone}. */
    void closed(NotReady gone) {
        CompletableFuture<Void> last = serving;
        serving = CompletableFuture.failedFuture(gone);
        last.completeExceptionally(gone);
    }
}
