package dev.serval.controller;

import dev.serval.replica.ReplicaRecord;
import java.util.List;

/**
 * What one reconciliation decided for one deployment, applied afterwards. {@link #noChange()} is a single
 * shared instance, so "nothing to do" costs no allocation and is detectable with {@code ==}.
 *
 * @param start  replicas of the current version to start
 * @param stop   replicas to stop (drain, then release)
 * @param update outdated RUNNING replicas to mark UPDATING: they keep serving until replacements run
 */
public record ReconcilePlan(int start, List<ReplicaRecord> stop, List<ReplicaRecord> update) {

    private static final ReconcilePlan NO_CHANGE = new ReconcilePlan(0, List.of(), List.of());

    public ReconcilePlan {
        if (start < 0) {
            throw new IllegalArgumentException("start must be >= 0, was " + start);
        }
        stop = List.copyOf(stop);
        update = List.copyOf(update);
    }

    public static ReconcilePlan noChange() {
        return NO_CHANGE;
    }

    public boolean isNoChange() {
        return this == NO_CHANGE;
    }
}
