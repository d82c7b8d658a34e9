package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class LatencyRecorderTest {

    private static final long MS = 1_000_000L;

    @Test
    void openLoopLatencyRunsFromTheIntendedStartNotFromTheSend() {
        LatencyRecorder recorder = new LatencyRecorder(0, 1_000 * MS, LatencyRecorder.Window.INTENDED_START);

        recorder.sent(100 * MS, 105 * MS); // the generator (or a full connection pool) held it back 5 ms
        recorder.success(100 * MS, 107 * MS); // the server took 2 ms once it arrived

        LatencyRecorder.Recorded recorded = recorder.snapshot();
        assertEquals(7.0, recorded.latencyMillis(50), 0.01);
        assertEquals(5.0, recorded.sendLag().getValueAtPercentile(50) / 1e6, 0.01);
    }

    @Test
    void openLoopCountsRequestsIntendedInsideTheWindowHoweverLateTheyComplete() {
        LatencyRecorder recorder = new LatencyRecorder(100 * MS, 200 * MS, LatencyRecorder.Window.INTENDED_START);

        recorder.success(50 * MS, 150 * MS); // warm-up request: not counted although it completes inside
        recorder.success(190 * MS, 2_190 * MS); // intended inside, answered 2 s later: counted, with its 2 s
        recorder.failure(199 * MS, 400 * MS, "HTTP 503");
        recorder.failure(200 * MS, 201 * MS, "HTTP 503"); // intended after the window

        LatencyRecorder.Recorded recorded = recorder.snapshot();
        assertEquals(1, recorded.successes());
        assertEquals(2_000.0, recorded.latencyMillis(100), 2.0);
        assertEquals(Map.of("HTTP 503", 1L), recorded.errors());
    }

    @Test
    void closedLoopCountsRequestsCompletingInsideTheWindow() {
        LatencyRecorder recorder = new LatencyRecorder(100 * MS, 200 * MS, LatencyRecorder.Window.COMPLETION);

        recorder.success(95 * MS, 101 * MS);
        recorder.success(101 * MS, 107 * MS);
        recorder.success(195 * MS, 201 * MS);
        recorder.failure(150 * MS, 160 * MS, "ConnectException");

        LatencyRecorder.Recorded recorded = recorder.snapshot();
        assertEquals(2, recorded.successes());
        assertEquals(20.0, recorded.throughput(), 1e-9); // 2 in 0.1 s
        assertEquals(6.0, recorded.latencyMillis(100), 0.01);
        assertEquals(1, recorded.errorCount());
    }

    @Test
    void aSnapshotIsNotChangedByLaterRecording() {
        LatencyRecorder recorder = new LatencyRecorder(0, 1_000 * MS, LatencyRecorder.Window.COMPLETION);
        recorder.success(0, 3 * MS);

        LatencyRecorder.Recorded before = recorder.snapshot();
        recorder.success(0, 900 * MS);

        assertEquals(1, before.successes());
        assertTrue(before.latencyMillis(100) < 4);
    }

    @Test
    void refusalsAreCountedByStatusTimedApartAndCheckedForRetryAfter() {
        LatencyRecorder recorder = new LatencyRecorder(0, 1_000 * MS, LatencyRecorder.Window.INTENDED_START);

        recorder.refused(10 * MS, 11 * MS, 503, 1_000, false);
        recorder.refused(20 * MS, 22 * MS, 429, 40, true);
        recorder.refused(30 * MS, 33 * MS, 503, -1, false); // no Retry-After
        recorder.refused(40 * MS, 44 * MS, 500, -1, false); // not a refusal a client can act on
        recorder.success(50 * MS, 60 * MS);

        LatencyRecorder.Recorded recorded = recorder.snapshot();
        assertEquals(Map.of("HTTP 503", 2L, "HTTP 429", 1L, "HTTP 500", 1L), recorded.errors());
        RunResult.Refusals refusals = recorded.refusalFigures();
        assertEquals(4, refusals.count());
        assertEquals(2, refusals.improper());
        assertEquals(1, refusals.withRetryAfterMs());
        assertEquals(4.0, refusals.max(), 0.01);
        assertEquals(10.0, recorded.latencyMillis(50), 0.01); // successes are not mixed with refusals
    }

    @Test
    void theWaitForAConnectionRunsFromTheIntendedStart() {
        LatencyRecorder recorder = new LatencyRecorder(0, 1_000 * MS, LatencyRecorder.Window.INTENDED_START);

        recorder.connected(100 * MS, 130 * MS); // every connection of the pool was busy for 30 ms
        recorder.connected(2_000 * MS, 2_001 * MS); // intended after the window

        LatencyRecorder.Recorded recorded = recorder.snapshot();
        assertEquals(1, recorded.connectionWait().getTotalCount());
        assertEquals(30.0, LatencyRecorder.Recorded.millis(recorded.connectionWait(), 99), 0.05);
    }
}
