package dev.serval.api.dashboard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The settings' bounds (the sampling itself is exercised through HTTP: DashboardTest, DashboardTokenTest). */
class DashboardSamplerTest {

    private static DashboardSampler sampler(Duration interval, Duration history) {
        return new DashboardSampler(null, true, interval, history);
    }

    @Test
    void aHistoryKeepsTwoToThreeThousandSixHundredSamplesOfAtLeastATenthOfASecond() {
        assertEquals(Duration.ofMinutes(5), sampler(Duration.ofSeconds(1), Duration.ofMinutes(5)).historyLength());
        assertEquals(Duration.ofHours(1), sampler(Duration.ofSeconds(1), Duration.ofHours(1)).historyLength());
        IllegalArgumentException tooFast = assertThrows(IllegalArgumentException.class,
                () -> sampler(Duration.ofMillis(99), Duration.ofMinutes(5)));
        assertTrue(tooFast.getMessage().contains("serval.ui.sample-interval"), tooFast.getMessage());
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> sampler(Duration.ofSeconds(1), Duration.ofSeconds(3601)));
        assertTrue(tooLong.getMessage().contains("3601"), tooLong.getMessage());
        assertThrows(IllegalArgumentException.class, () -> sampler(Duration.ofSeconds(10), Duration.ofSeconds(10)));
    }
}
