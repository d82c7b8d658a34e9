package dev.serval.replica;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where a replica is in its life. The transition table is {@link #next()}; {@link ReplicaRecord#withState}
 * is the one place that performs transitions and rejects the rest.
 *
 * <pre>
 * STARTING --> RUNNING --> UPDATING --> STOPPING --> STOPPED
 *    |   \        |  \        |   \________________/^
 *    |    \       |   \_______|______> RECOVERING ---+
 *    |     \______|___________|_______/
 *    +------------+--> STOPPING
 * </pre>
 * STARTING loads (or reuses) the model and warms every predictor up. RUNNING serves. UPDATING still serves but
 * runs an outdated version and is stopped once enough replicas of the new version run. STOPPING takes no new
 * requests and drains. RECOVERING failed its health checks (or failed to start), takes no requests and is
 * being released while a replacement starts. STOPPED is terminal.
 */
public enum ReplicaState {
    STARTING, RUNNING, UPDATING, STOPPING, RECOVERING, STOPPED;

    private static final Set<ReplicaState> FROM_STARTING = EnumSet.of(RUNNING, STOPPING, RECOVERING);
    private static final Set<ReplicaState> FROM_RUNNING = EnumSet.of(UPDATING, STOPPING, RECOVERING);
    private static final Set<ReplicaState> FROM_UPDATING = EnumSet.of(RUNNING, STOPPING, RECOVERING);
    private static final Set<ReplicaState> FROM_RELEASING = EnumSet.of(STOPPED);
    private static final Set<ReplicaState> FROM_STOPPED = EnumSet.noneOf(ReplicaState.class);

    /** The states this one may move to. */
    public Set<ReplicaState> next() {
        return switch (this) {
            case STARTING -> FROM_STARTING;
            case RUNNING -> FROM_RUNNING;
            case UPDATING -> FROM_UPDATING;
            case STOPPING, RECOVERING -> FROM_RELEASING;
            case STOPPED -> FROM_STOPPED;
        };
    }

    public boolean canMoveTo(ReplicaState target) {
        return next().contains(target);
    }

    /** Whether a replica in this state receives new requests. */
    public boolean routable() {
        return this == RUNNING || this == UPDATING;
    }

    /** Whether the replica is on its way out (no longer counts toward the desired number of replicas). */
    public boolean leaving() {
        return this == STOPPING || this == RECOVERING || this == STOPPED;
    }
}
