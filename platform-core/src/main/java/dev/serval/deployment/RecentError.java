package dev.serval.deployment;

import java.time.Instant;
import java.util.Objects;

/**
 * A replica failure (a failed start, failed health checks, a failure-monitor replacement) as the status view shows
 * it.
 *
 * @param at      when the controller published it
 * @param message the controller's description, naming the replica and the cause
 */
public record RecentError(Instant at, String message) {

    public RecentError {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(message, "message");
    }
}
