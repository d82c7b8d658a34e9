package dev.serval.api.dashboard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeploymentHistoryTest {

    private static double[] point(double ok) {
        double[] point = DeploymentHistory.emptyPoint();
        point[0] = ok;
        return point;
    }

    @SuppressWarnings("unchecked")
    private static List<Double> ok(Map<String, Object> history) {
        return (List<Double>) ((Map<String, Object>) history.get("requestsPerSecond")).get("ok");
    }

    @Test
    void keepsTheLastSamplesOldestFirst() {
        DeploymentHistory history = new DeploymentHistory(7, 3);
        for (int i = 1; i <= 5; i++) {
            history.add(i * 1000L, point(i));
        }
        Map<String, Object> all = history.since(0);
        assertEquals(7L, all.get("id"));
        assertArrayEquals(new long[] {3000, 4000, 5000}, (long[]) all.get("t"));
        assertEquals(List.of(3.0, 4.0, 5.0), ok(all));
    }

    @Test
    void onlyTheSamplesAfterTheGivenTime() {
        DeploymentHistory history = new DeploymentHistory(1, 10);
        for (int i = 1; i <= 4; i++) {
            history.add(i * 1000L, point(i));
        }
        assertArrayEquals(new long[] {3000, 4000}, (long[]) history.since(2000).get("t"));
        assertArrayEquals(new long[0], (long[]) history.since(4000).get("t"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void nothingObservedIsNull() {
        DeploymentHistory history = new DeploymentHistory(1, 2);
        history.add(1000, point(2.5));
        Map<String, Object> all = history.since(0);
        Map<String, Map<String, List<Double>>> latency = (Map<String, Map<String, List<Double>>>) all.get("latencyMs");
        assertEquals(DeploymentHistory.PHASES, List.copyOf(latency.keySet()));
        assertNull(latency.get("total").get("p99").get(0));
        assertEquals(List.of(2.5), ok(all));
    }
}
