package dev.serval.routing;

import dev.serval.model.Model;
import dev.serval.request.CallContext;
import dev.serval.spec.DeploymentSpec;
import dev.serval.spec.ServedModel;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A replica as the router sees it. Thread-safe: any request thread calls these concurrently.
 *
 * <p>Protocol: a caller that gets {@code true} from {@link #tryAcquire()} holds one of the replica's
 * {@code max_ongoing_requests} slots and must either {@link #run} exactly once (the slot is then released by
 * the caller when the returned future completes) or {@link #release()} it.
 */
public interface RoutableReplica<I, O> {

    /** Unique within the deployment. */
    long id();

    /** The model version this replica serves. */
    default String version() {
        return "";
    }

    /** Requests admitted and not yet finished. Read without synchronisation, for choosing between replicas. */
    int inFlight();

    /** Takes a slot if one is free and the replica still accepts requests; a CAS, never blocks. */
    boolean tryAcquire();

    /** Gives back a slot taken with {@link #tryAcquire()}. */
    void release();

    /**
     * The loaded model this replica runs. Requests are validated against it when they reach this replica, and their
     * outputs mapped with its {@code io()}, so that during a rolling update each request is judged by the version
     * that runs it. Every serving replica has one; only stand-ins that run no model (routing tests, benchmarks) keep
     * this default, null.
     */
    default Model<I, O> model() {
        return null;
    }

    /**
     * What this replica's answer to an input depends on besides the input (its model, loader options, version and
     * session settings): the model part of a result cache's key. Null for stand-ins that run no model: their answers
     * are never cached.
     */
    default ServedModel served() {
        return null;
    }

    /**
     * Runs one admitted request; completes on a predictor thread. Never blocks the caller.
     *
     * @param deadlineNanos until when it may run ({@link CallContext#deadlineNanos}): a request whose deadline has
     *                      passed when a predictor would take it fails with {@code DeadlineExceeded} instead of running
     * @throws dev.serval.error.InvalidInput when an input is one this replica's {@link #model()} cannot take (checked
     *                                       before anything is queued); the caller then releases the slot
     */
    CompletableFuture<List<O>> run(List<I> inputs, long deadlineNanos);

    /** {@link #run(List, long)} without a deadline (benchmarks and tests that drive a replica directly). */
    default CompletableFuture<List<O>> run(List<I> inputs) {
        return run(inputs, CallContext.NO_DEADLINE);
    }

    /** Takes over the settings of {@code spec} that a running replica can change in place (batch size and wait). */
    default void tune(DeploymentSpec spec) {
    }
}
