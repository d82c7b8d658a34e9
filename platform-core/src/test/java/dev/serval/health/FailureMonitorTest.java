package dev.serval.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FailureMonitorTest {

    private final AtomicLong clock = new AtomicLong(5_000_000_000L);
    private final List<String> replaced = new ArrayList<>();

    private FailureMonitor monitor(boolean enabled) {
        return new FailureMonitor(new FailureMonitor.Settings(enabled, Duration.ofSeconds(10), 0.5, 10, 2), clock::get,
                (deployment, reason) -> replaced.add(deployment + ": " + reason));
    }

    private static void record(FailureMonitor.Window window, int ok, int failed) {
        for (int i = 0; i < ok; i++) {
            window.record(false);
        }
        for (int i = 0; i < failed; i++) {
            window.record(true);
        }
    }

    @Test
    void doesNothingBelowTheMinimumNumberOfRequests() {
        FailureMonitor monitor = monitor(true);
        record(monitor.window("d"), 0, 9);
        monitor.evaluate();
        assertEquals(List.of(), replaced);
    }

    @Test
    void replacesReplicasWhenTheRatioReachesTheThresholdThenDeclaresTheNodeNotLive() {
        FailureMonitor monitor = monitor(true);
        FailureMonitor.Window window = monitor.window("d");

        record(window, 5, 5);
        monitor.evaluate();
        assertEquals(List.of("d: failure monitor: 50% of the last 10 requests to 'd' failed"), replaced);
        assertTrue(monitor.live());

        monitor.evaluate();
        assertEquals(1, replaced.size(), "the window starts empty after a replacement");

        record(window, 2, 8);
        monitor.evaluate();
        assertEquals(2, replaced.size());
        assertTrue(monitor.live());

        record(window, 0, 10);
        monitor.evaluate();
        assertEquals(2, replaced.size(), "no third replacement");
        assertFalse(monitor.live());
        assertEquals("100% of the last 10 requests to 'd' failed after 2 replica replacements", monitor.notLiveReason());
    }

    @Test
    void aHealthyWindowResetsTheReplacementCount() {
        FailureMonitor monitor = monitor(true);
        FailureMonitor.Window window = monitor.window("d");
        record(window, 0, 10);
        monitor.evaluate();
        record(window, 10, 0);
        monitor.evaluate();
        assertEquals(0, window.replacements());
        record(window, 0, 10);
        monitor.evaluate();
        record(window, 0, 10);
        monitor.evaluate();
        assertTrue(monitor.live(), "two trips after a healthy window are within the budget");
    }

    @Test
    void failuresOlderThanTheWindowDoNotCount() {
        FailureMonitor monitor = monitor(true);
        FailureMonitor.Window window = monitor.window("d");
        record(window, 0, 9);
        clock.addAndGet(Duration.ofSeconds(11).toNanos());
        record(window, 1, 1);
        monitor.evaluate();
        assertEquals(List.of(), replaced);
    }

    @Test
    void canBeSwitchedOff() {
        FailureMonitor monitor = monitor(false);
        record(monitor.window("d"), 0, 100);
        monitor.evaluate();
        assertEquals(List.of(), replaced);
        assertTrue(monitor.live());
    }
}
