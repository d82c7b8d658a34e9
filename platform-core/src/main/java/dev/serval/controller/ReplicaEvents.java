package dev.serval.controller;

import dev.serval.routing.RoutableReplica;

/**
 * Reports from replicas to the controller; thread-safe, each report is handled on the controller thread. Once the
 * controller is closed a report throws {@link java.util.concurrent.RejectedExecutionException}: nobody will handle it.
 */
public interface ReplicaEvents<I, O> {

    void started(long id, RoutableReplica<I, O> replica);

    /** The replica failed to start, or became unhealthy while serving. */
    void failed(long id, String reason);

    void stopped(long id);
}
