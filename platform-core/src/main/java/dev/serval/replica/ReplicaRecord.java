package dev.serval.replica;

import java.util.Objects;

/**
 * What the controller knows about one replica: immutable; changed only through withers, which return
 * {@code this} when nothing changes so that "no change" is detectable with {@code ==}.
 *
 * @param deployment the deployment's name
 * @param id         unique within the deployment, never reused
 * @param version    the model version the replica runs
 * @param state      where it is in its life
 * @param failures   consecutive failed starts or health checks reported for this replica
 * @param lastError  the last failure's message, or null
 */
public record ReplicaRecord(String deployment, long id, String version, ReplicaState state, int failures, String lastError) {

    public ReplicaRecord {
        Objects.requireNonNull(deployment, "deployment");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(state, "state");
        if (id < 0 || failures < 0) {
            throw new IllegalArgumentException("id and failures must be >= 0: " + id + ", " + failures);
        }
    }

    /** A new replica, STARTING. */
    public static ReplicaRecord starting(String deployment, long id, String version) {
        return new ReplicaRecord(deployment, id, version, ReplicaState.STARTING, 0, null);
    }

    /**
     * This record in {@code target} state; {@code this} when already there.
     *
     * @throws IllegalStateException naming both states when the table does not allow the move
     */
    public ReplicaRecord withState(ReplicaState target) {
        if (state == target) {
            return this;
        }
        if (!state.canMoveTo(target)) {
            throw new IllegalStateException("replica " + name() + " cannot move from " + state + " to " + target);
        }
        return new ReplicaRecord(deployment, id, version, target, failures, lastError);
    }

    /** This record with one more failure, in {@code target} state. */
    public ReplicaRecord withFailure(ReplicaState target, String error) {
        ReplicaRecord moved = withState(target);
        return new ReplicaRecord(deployment, id, version, moved.state, failures + 1, error);
    }

    /** {@code deployment#id}, for logs and messages. */
    public String name() {
        return deployment + "#" + id;
    }
}
