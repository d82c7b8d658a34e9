package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class LoadReportTest {

    @Test
    void theLimitsAroundTheDefaultConfigurationAreOneParagraph() {
        RawLimits around = new RawLimits(List.of(), List.of(
                new RawLimits.Rate(RawLimits.DJL, "short", new RawLimits.Split(2, 1), 1, 1012.4),
                new RawLimits.Rate("python-1.32.0", "short", new RawLimits.Split(1, 2), 1, 560)), List.of(
                new RawLimits.Single("python-1.32.0", new RawLimits.Split(1, 2), 1.7654, 2.1, 1.8)));

        assertEquals("The batch-1 limits measured again just before and just after the default configuration's runs "
                + "(the better of the two): djl 2x1 batch 1: 1012 texts/s; python-1.32.0 1x2 batch 1: 560 texts/s; "
                + "python-1.32.0 1x2 single-text p50 1.765 ms.\n\n", LoadReport.limitsAroundDefault(around));
    }
}
