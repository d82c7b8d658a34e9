package dev.serval.bench.load;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The combined soak's goals (issue 37), evaluated on what the run recorded: pure functions over counts and samples,
 * tested without a server. Stateless.
 *
 * <ul>
 *   <li>every stream of well-formed requests (REST, gRPC, the pipeline, the multiplexed models, the handler, the
 *       autoscaled deployment) met only the refusals the design promises ({@link #PROMISED_REFUSALS}: 503 or 429 with
 *       {@code Retry-After} for load, gRPC UNAVAILABLE or RESOURCE_EXHAUSTED); any other error counts against it;</li>
 *   <li>every hostile client got the answer documented for its kind (docs/api.md, "Limits": 408 or
 *       DEADLINE_EXCEEDED for a body or message that stops coming, 400 or INVALID_ARGUMENT for a bad shape), never
 *       a 5xx, a reset or silence;</li>
 *   <li>every management change (a rolling update, a create, a delete) answered 2xx and took effect;</li>
 *   <li>the features were exercised: the autoscaled deployment went to zero and came back at least once, the
 *       multiplexed deployment evicted models at least once;</li>
 *   <li>heap after a full GC and RSS flat over the second half, with {@link SoakGoals}' thresholds and fits;</li>
 *   <li>at the end, every slot, queue entry and buffered byte Serval reports is back at zero ({@code leftovers}; a
 *       reading that could not be taken is NaN and reported as such, with no verdict).</li>
 * </ul>
 */
final class CombinedSoakGoals {

    /** The refusals the design promises to a well-formed request under load (docs/api.md, docs/metrics.md). */
    static final Set<String> PROMISED_REFUSALS = Set.of("HTTP 503", "HTTP 429", "grpc UNAVAILABLE",
            "grpc RESOURCE_EXHAUSTED");

    private CombinedSoakGoals() {
    }

    /**
     * What one stream of well-formed requests got.
     *
     * @param name   the stream
     * @param ok     requests answered 200 (gRPC: OK)
     * @param errors the others by kind: {@code HTTP <status>}, {@code grpc <code>} or an exception's class
     */
    record Stream(String name, long ok, Map<String, Long> errors) {

        Stream {
            errors = Map.copyOf(errors);
        }

        long refusals() {
            return errors.entrySet().stream().filter(e -> PROMISED_REFUSALS.contains(e.getKey()))
                    .mapToLong(Map.Entry::getValue).sum();
        }

        long unpromised() {
            return errors.entrySet().stream().filter(e -> !PROMISED_REFUSALS.contains(e.getKey()))
                    .mapToLong(Map.Entry::getValue).sum();
        }
    }

    /**
     * What one kind of hostile client got.
     *
     * @param kind     what it did (e.g. "REST body stalled")
     * @param expected the answer the design promises it (e.g. "HTTP 408")
     * @param outcomes its answers by kind, in the same spelling
     */
    record Hostile(String kind, String expected, Map<String, Long> outcomes) {

        Hostile {
            outcomes = Map.copyOf(outcomes);
        }

        long unexpected() {
            return outcomes.entrySet().stream().filter(e -> !e.getKey().equals(expected))
                    .mapToLong(Map.Entry::getValue).sum();
        }
    }

    /**
     * Whether the features under test were exercised.
     *
     * @param zeroAndBack      times the autoscaled deployment was seen at zero replicas and then serving again
     * @param evictions        models the multiplexed deployment unloaded ({@code serval_multiplex_evictions_total})
     * @param managementOk     management changes that answered 2xx and took effect
     * @param managementFailed the others
     */
    record Coverage(long zeroAndBack, double evictions, long managementOk, long managementFailed) {
    }

    /** The goals, in the order the summary shows them. */
    static List<SoakGoals.Verdict> evaluate(List<Stream> streams, List<Hostile> hostile, Coverage coverage,
            List<SoakGoals.Sample> samples, Map<String, Double> leftovers) {
        List<SoakGoals.Verdict> verdicts = new ArrayList<>();
        for (Stream stream : streams) {
            verdicts.add(count(stream.name() + ": errors other than promised refusals", stream.unpromised(), true));
            verdicts.add(new SoakGoals.Verdict(stream.name() + ": promised refusals (503/429, UNAVAILABLE)",
                    stream.refusals(), Double.NaN, "", "", null));
        }
        for (Hostile client : hostile) {
            long total = client.outcomes().values().stream().mapToLong(Long::longValue).sum();
            verdicts.add(new SoakGoals.Verdict("hostile, " + client.kind() + ": answers other than "
                    + client.expected() + " (of " + total + ")", client.unexpected(), Double.NaN, "", "= 0",
                    total == 0 ? null : client.unexpected() == 0));
        }
        verdicts.add(count("management changes failed", coverage.managementFailed(), true));
        verdicts.add(atLeastOne("management changes applied", coverage.managementOk()));
        verdicts.add(atLeastOne("autoscaled deployment: to zero and back", coverage.zeroAndBack()));
        verdicts.add(atLeastOne("multiplexed deployment: models evicted", coverage.evictions()));
        List<SoakGoals.Sample> half = SoakGoals.secondHalf(samples);
        verdicts.add(SoakGoals.slope(half, "heap after full GC, second half", SoakGoals.Sample::heapMb,
                SoakGoals.MAX_HEAP_SLOPE_MB_PER_MINUTE));
        verdicts.add(SoakGoals.slope(half, "RSS, second half", SoakGoals.Sample::rssMb,
                SoakGoals.MAX_RSS_SLOPE_MB_PER_MINUTE));
        verdicts.add(SoakGoals.reported(half, "RSS minus heap committed, second half", SoakGoals.Sample::nativeMb,
                "MB/min"));
        verdicts.add(SoakGoals.reported(half, "REST p99 per interval, second half", SoakGoals.Sample::p99Millis,
                "ms/min"));
        verdicts.add(SoakGoals.reported(half, "threads, second half", s -> s.threads(), "per min"));
        leftovers.forEach((name, value) -> verdicts.add(new SoakGoals.Verdict("at the end: " + name, value,
                Double.NaN, "", "= 0", Double.isNaN(value) ? null : value == 0)));
        return verdicts;
    }

    /** Whether every goal with a verdict was met (goals without one, such as unread figures, do not count). */
    static boolean allMet(List<SoakGoals.Verdict> verdicts) {
        return verdicts.stream().allMatch(v -> v.met() == null || v.met());
    }

    private static SoakGoals.Verdict count(String figure, long value, boolean zero) {
        return new SoakGoals.Verdict(figure, value, Double.NaN, "", zero ? "= 0" : "", zero ? value == 0 : null);
    }

    private static SoakGoals.Verdict atLeastOne(String figure, double value) {
        return new SoakGoals.Verdict(figure, value, Double.NaN, "", "≥ 1", value >= 1);
    }
}
