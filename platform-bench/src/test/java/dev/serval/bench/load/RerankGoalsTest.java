package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class RerankGoalsTest {

    @Test
    void aRoundsLimitIsTheBetterOfTheRawMeasurementsAroundIt() {
        RerankGoals.Round round = new RerankGoals.Round(1, 90, 8, 100, 95);

        assertEquals(100, round.limit(), 1e-9);
        assertEquals(0.9, round.ratio(), 1e-9);
    }

    @Test
    void aRawMeasurementThatIsMissingLeavesTheOtherAsTheLimit() {
        assertEquals(95, new RerankGoals.Round(1, 90, 8, Double.NaN, 95).limit(), 1e-9);
        assertEquals(100, new RerankGoals.Round(1, 90, 8, 100, Double.NaN).limit(), 1e-9);
        assertTrue(Double.isNaN(new RerankGoals.Round(1, 90, 8, Double.NaN, Double.NaN).ratio()));
    }

    @Test
    void theCpuRatioIsServalsCpuPerPairOverTheRawLoopsAndTakesNoPartInTheVerdict() {
        RerankGoals.Round round = new RerankGoals.Round(1, 95, 8, 100, 100, 16_500, 15_000);

        assertEquals(1.1, round.cpuRatio(), 1e-9);
        assertTrue(Double.isNaN(new RerankGoals.Round(1, 95, 8, 100, 100).cpuRatio()));
        assertTrue(RerankGoals.evaluate(List.of(round)).met());
    }

    @Test
    void servalAtNineTenthsOfTheRawLoopMeetsTheGoalAndJustBelowDoesNot() {
        assertTrue(RerankGoals.evaluate(List.of(new RerankGoals.Round(1, 90, 8, 100, 100))).met());
        assertFalse(RerankGoals.evaluate(List.of(new RerankGoals.Round(1, 89.9, 8, 100, 100))).met());
    }

    @Test
    void theVerdictIsOnTheMedianOfTheRoundsSoThatOneDisturbedRoundDoesNotDecideIt() {
        RerankGoals.Verdict three = RerankGoals.evaluate(List.of(new RerankGoals.Round(1, 95, 8, 100, 100),
                new RerankGoals.Round(2, 50, 8, 100, 100), new RerankGoals.Round(3, 92, 8, 100, 100)));
        RerankGoals.Verdict two = RerankGoals.evaluate(List.of(new RerankGoals.Round(1, 95, 8, 100, 100),
                new RerankGoals.Round(2, 80, 8, 100, 100)));

        assertEquals(0.92, three.medianRatio(), 1e-9);
        assertTrue(three.met());
        assertEquals(0.875, two.medianRatio(), 1e-9);
        assertFalse(two.met());
    }

    @Test
    void aRoundWithoutARatioFailsTheRunInsteadOfBeingSkipped() {
        RerankGoals.Verdict verdict = RerankGoals.evaluate(List.of(new RerankGoals.Round(1, 95, 8, 100, 100),
                new RerankGoals.Round(2, Double.NaN, 8, 100, 100), new RerankGoals.Round(3, 96, 8, 100, 100)));

        assertTrue(Double.isNaN(verdict.medianRatio()));
        assertFalse(verdict.met());
        assertThrows(IllegalArgumentException.class, () -> RerankGoals.evaluate(List.of()));
    }
}
