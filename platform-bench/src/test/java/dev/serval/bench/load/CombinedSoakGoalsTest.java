package dev.serval.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CombinedSoakGoalsTest {

    private static final CombinedSoakGoals.Coverage COVERED = new CombinedSoakGoals.Coverage(2, 30, 10, 0);

    /** Samples every minute for 10 minutes, heap and RSS flat. */
    private static List<SoakGoals.Sample> flat() {
        List<SoakGoals.Sample> samples = new ArrayList<>();
        for (int minute = 0; minute <= 10; minute++) {
            samples.add(new SoakGoals.Sample(minute, 0, 12, 60 + (minute % 2) * 0.2, 700 + (minute % 3), 400, 90));
        }
        return samples;
    }

    private static Map<String, Double> zeros() {
        Map<String, Double> leftovers = new LinkedHashMap<>();
        leftovers.put("serval_http_buffered_bytes", 0.0);
        leftovers.put("serval_ongoing_requests (sum)", 0.0);
        return leftovers;
    }

    private static SoakGoals.Verdict find(List<SoakGoals.Verdict> verdicts, String figureStart) {
        return verdicts.stream().filter(v -> v.figure().startsWith(figureStart)).findFirst().orElseThrow();
    }

    @Test
    void promisedRefusalsAreReportedButOnlyOtherErrorsMissTheGoal() {
        CombinedSoakGoals.Stream refused = new CombinedSoakGoals.Stream("REST MiniLM", 1000,
                Map.of("HTTP 503", 7L, "grpc UNAVAILABLE", 1L));
        CombinedSoakGoals.Stream broken = new CombinedSoakGoals.Stream("pipeline", 1000,
                Map.of("HTTP 500", 2L, "HTTP 503", 1L, "TimeoutException", 1L));

        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(List.of(refused, broken), List.of(), COVERED,
                flat(), zeros());

        assertTrue(find(verdicts, "REST MiniLM: errors other").met());
        assertEquals(8, find(verdicts, "REST MiniLM: promised refusals").value());
        assertNull(find(verdicts, "REST MiniLM: promised refusals").met());
        assertFalse(find(verdicts, "pipeline: errors other").met());
        assertEquals(3, find(verdicts, "pipeline: errors other").value());
        assertFalse(CombinedSoakGoals.allMet(verdicts));
    }

    @Test
    void aHostileClientMeetsItsGoalOnlyWithTheAnswerItsKindIsPromised() {
        CombinedSoakGoals.Hostile stalled = new CombinedSoakGoals.Hostile("REST body stalled", "HTTP 408",
                Map.of("HTTP 408", 20L));
        CombinedSoakGoals.Hostile unfinished = new CombinedSoakGoals.Hostile("gRPC message unfinished",
                "grpc DEADLINE_EXCEEDED", Map.of("grpc DEADLINE_EXCEEDED", 19L, "no answer", 1L));
        CombinedSoakGoals.Hostile never = new CombinedSoakGoals.Hostile("gRPC bad shape", "grpc INVALID_ARGUMENT",
                Map.of());

        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(List.of(), List.of(stalled, unfinished, never),
                COVERED, flat(), zeros());

        assertTrue(find(verdicts, "hostile, REST body stalled").met());
        assertFalse(find(verdicts, "hostile, gRPC message unfinished").met());
        assertEquals(1, find(verdicts, "hostile, gRPC message unfinished").value());
        assertNull(find(verdicts, "hostile, gRPC bad shape").met()); // never ran: no verdict either way
    }

    @Test
    void featuresThatWereNeverExercisedMissTheirGoals() {
        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(List.of(), List.of(),
                new CombinedSoakGoals.Coverage(0, 0, 4, 1), flat(), zeros());

        assertFalse(find(verdicts, "autoscaled deployment: to zero and back").met());
        assertFalse(find(verdicts, "multiplexed deployment: models evicted").met());
        assertFalse(find(verdicts, "management changes failed").met());
        assertTrue(find(verdicts, "management changes applied").met());
    }

    @Test
    void everyLeftoverMustBeZeroAndAnUnreadOneHasNoVerdict() {
        Map<String, Double> leftovers = zeros();
        leftovers.put("serval_queued_requests (sum)", 1.0);
        leftovers.put("multiplex pins", Double.NaN);

        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(List.of(), List.of(), COVERED, flat(),
                leftovers);

        assertTrue(find(verdicts, "at the end: serval_http_buffered_bytes").met());
        assertFalse(find(verdicts, "at the end: serval_queued_requests").met());
        assertNull(find(verdicts, "at the end: multiplex pins").met());
        assertFalse(CombinedSoakGoals.allMet(verdicts));
    }

    @Test
    void flatMemoryMeetsTheSoaksThresholdsAndAGrowingHeapDoesNot() {
        assertTrue(CombinedSoakGoals.allMet(CombinedSoakGoals.evaluate(List.of(), List.of(), COVERED, flat(),
                zeros())));

        List<SoakGoals.Sample> growing = flat().stream().map(s -> new SoakGoals.Sample(s.minutes(), 0, 12,
                60 + 2 * s.minutes(), s.rssMb(), s.nativeMb(), s.threads())).toList();
        List<SoakGoals.Verdict> verdicts = CombinedSoakGoals.evaluate(List.of(), List.of(), COVERED, growing, zeros());

        assertFalse(find(verdicts, "heap after full GC").met());
        assertEquals(2.0, find(verdicts, "heap after full GC").value(), 1e-9);
        assertTrue(find(verdicts, "RSS, second half").met());
    }
}
