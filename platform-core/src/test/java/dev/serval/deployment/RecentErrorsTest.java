package dev.serval.deployment;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.serval.spec.DeploymentStatus;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecentErrorsTest {

    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private final RecentErrors errors = new RecentErrors(InstantSource.fixed(NOW));

    private static DeploymentStatus status(int failedStarts, String error) {
        return new DeploymentStatus("d", "1", 1, 0, 0, 0, 0, 0, failedStarts, error, false);
    }

    @Test
    void recordsANewMessageOrTheSameMessageFromOneMoreFailedStart() {
        DeploymentStatus first = status(1, "boom");
        errors.record(DeploymentStatus.initial("d", "1", 1, false), first);
        errors.record(first, status(1, "boom")); // republished, nothing new
        errors.record(first, status(2, "boom")); // failed again, same reason
        errors.record(status(2, "boom"), status(0, "health check failed"));

        assertEquals(List.of(new RecentError(NOW, "boom"), new RecentError(NOW, "boom"),
                new RecentError(NOW, "health check failed")), errors.list());
    }

    @Test
    void keepsTheLastTenOldestFirst() {
        DeploymentStatus previous = DeploymentStatus.initial("d", "1", 1, false);
        for (int i = 0; i < 15; i++) {
            DeploymentStatus next = status(0, "error " + i);
            errors.record(previous, next);
            previous = next;
        }

        List<RecentError> kept = errors.list();
        assertEquals(RecentErrors.CAPACITY, kept.size());
        assertEquals("error 5", kept.getFirst().message());
        assertEquals("error 14", kept.getLast().message());
    }
}
