package dev.serval.deployment;

import dev.serval.error.NotReady;
import dev.serval.spec.DeploymentState;
import dev.serval.spec.DeploymentStatus;

/**
 * Why a deployment does not serve, in the words its requests are refused with. Stateless; every method is a pure
 * function of what the deployment last published.
 */
final class NotServing {

    private NotServing() {
    }

    /**
     * Why nothing can serve with {@code status}, or null while a replica serves or one is starting: the router then
     * refuses every request, queued ones included, since waiting would never end.
     *
     * @param onDemand whether the deployment is loaded on demand: at zero replicas its requests wait for the replica
     *                 that its loader is about to ask for
     */
    static String reason(DeploymentStatus status, boolean onDemand) {
        if (status.routable() > 0 || status.starting() > 0) {
            return null;
        }
        if (status.desired() == 0) {
            // Autoscaled to zero: a request waits in the queue while the autoscaler starts a replica for it.
            return status.autoscaled() || onDemand ? null : scaledToZero(status.name());
        }
        return status.failedStarts() > 0 ? "model '" + status.name() + "' failed to load: " + status.lastError() : null;
    }

    /**
     * The refusal of a request to deployment {@code name} in {@code state}, given its latest {@code status} and
     * whether it has ever served ({@code everRouted}: a deployment that lost its replicas is not "still loading").
     */
    static NotReady refusal(String name, DeploymentState state, DeploymentStatus status, boolean everRouted) {
        if (state == DeploymentState.LOADING && status.desired() == 0) {
            return new NotReady(scaledToZero(name));
        }
        return switch (state) {
            case LOADING -> everRouted
                    ? new NotReady("model '" + name + "' has no running replica; " + status.starting() + " starting")
                    : new NotReady("model '" + name + "' is still loading");
            case FAILED -> new NotReady("model '" + name + "' failed to load: " + status.lastError());
            case STOPPED -> new NotReady("model '" + name + "' is shutting down");
            case IDLE -> new NotReady("model '" + name + "' is scaled to zero replicas");
            case PARKED -> new NotReady(scaledToZero(name));
            case READY -> new NotReady("model '" + name + "' has no running replica");
        };
    }

    private static String scaledToZero(String name) {
        return "model '" + name + "' has num_replicas 0: no replica serves it";
    }
}
