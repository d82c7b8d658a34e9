package dev.serval.controller;

/**
 * A deployment's replicas per state, its consecutive failed starts (0 once a replica starts) and its last error,
 * as the controller last saw them. Immutable; a new one is
 * published only when something changed.
 */
public record DeploymentStatus(String name, String version, int desired, int starting, int running, int updating,
        int stopping, int recovering, int failedStarts, String lastError) {

    public int routable() {
        return running + updating;
    }
}
