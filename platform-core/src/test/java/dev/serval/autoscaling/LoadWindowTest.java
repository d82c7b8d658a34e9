package dev.serval.autoscaling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LoadWindowTest {

    @Test
    void averagesTheSamplesWithinTheLookBackPeriod() {
        LoadWindow window = new LoadWindow(8);
        assertTrue(Double.isNaN(window.average(0, 10)));
        for (int t = 1; t <= 6; t++) {
            window.add(t * 10L, t);
        }
        assertEquals(5.5, window.average(60, 20), 1e-9, "samples at 50 and 60");
        assertEquals(3.5, window.average(60, 1_000), 1e-9, "all six");
        assertEquals(6, window.latest());
    }

    @Test
    void keepsOnlyItsCapacityOfNewestSamples() {
        LoadWindow window = new LoadWindow(3);
        for (int t = 1; t <= 10; t++) {
            window.add(t, t * 10);
        }
        assertEquals(90.0, window.average(10, 1_000), 1e-9, "80, 90, 100");
    }

    @Test
    void fallsBackToTheNewestSampleWhenNoneIsRecent() {
        LoadWindow window = new LoadWindow(4);
        window.add(10, 7);
        assertEquals(7.0, window.average(1_000_000, 5), 1e-9);
    }
}
