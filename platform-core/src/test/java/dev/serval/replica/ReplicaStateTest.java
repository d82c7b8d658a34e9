package dev.serval.replica;

import static dev.serval.replica.ReplicaState.RECOVERING;
import static dev.serval.replica.ReplicaState.RUNNING;
import static dev.serval.replica.ReplicaState.STARTING;
import static dev.serval.replica.ReplicaState.STOPPED;
import static dev.serval.replica.ReplicaState.STOPPING;
import static dev.serval.replica.ReplicaState.UPDATING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReplicaStateTest {

    private static final Map<ReplicaState, Set<ReplicaState>> LEGAL = Map.of(
            STARTING, EnumSet.of(RUNNING, STOPPING, RECOVERING),
            RUNNING, EnumSet.of(UPDATING, STOPPING, RECOVERING),
            UPDATING, EnumSet.of(RUNNING, STOPPING, RECOVERING),
            STOPPING, EnumSet.of(STOPPED),
            RECOVERING, EnumSet.of(STOPPED),
            STOPPED, EnumSet.noneOf(ReplicaState.class));

    private static ReplicaRecord in(ReplicaState state) {
        return new ReplicaRecord("d", 7, "1", state, 0, null);
    }

    @Test
    void everyLegalTransitionIsAllowedAndEveryOtherIsRejectedNamingBothStates() {
        for (ReplicaState from : ReplicaState.values()) {
            for (ReplicaState to : ReplicaState.values()) {
                if (from == to) {
                    continue;
                }
                ReplicaRecord record = in(from);
                if (LEGAL.get(from).contains(to)) {
                    assertEquals(to, record.withState(to).state(), from + " -> " + to);
                } else {
                    IllegalStateException illegal = assertThrows(IllegalStateException.class, () -> record.withState(to),
                            from + " -> " + to);
                    assertEquals("replica d#7 cannot move from " + from + " to " + to, illegal.getMessage());
                }
            }
        }
    }

    @Test
    void aWitherThatChangesNothingReturnsTheSameRecord() {
        for (ReplicaState state : ReplicaState.values()) {
            ReplicaRecord record = in(state);
            assertSame(record, record.withState(state));
        }
    }

    @Test
    void onlyRunningAndUpdatingReplicasAreRoutable() {
        assertEquals(EnumSet.of(RUNNING, UPDATING),
                EnumSet.copyOf(java.util.Arrays.stream(ReplicaState.values()).filter(ReplicaState::routable).toList()));
    }

    @Test
    void aFailureCountsAndMovesTheRecord() {
        ReplicaRecord failed = in(RUNNING).withFailure(RECOVERING, "probe failed");
        assertEquals(RECOVERING, failed.state());
        assertEquals(1, failed.failures());
        assertEquals("probe failed", failed.lastError());
    }
}
