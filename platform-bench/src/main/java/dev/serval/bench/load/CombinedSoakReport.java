package dev.serval.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the combined soak's results: {@code report.json} (everything, NaN as null), {@code summary.md} (the goals,
 * then each stream, hostile kind, management change, sample and end reading) and, with {@link SoakReport}'s plots,
 * {@code memory.png} (heap after GC and RSS) and {@code latency.png} (the REST MiniLM stream's p50, p99 and max per
 * interval). Stateless.
 */
final class CombinedSoakReport {

    private CombinedSoakReport() {
    }

    static void write(Path out, Map<String, Object> report, CombinedSoakBenchmark.Settings settings, double saturation,
            List<CombinedSoakGoals.Stream> streams, List<CombinedSoakGoals.Hostile> hostile,
            List<CombinedSoakBenchmark.Change> changes, List<CombinedSoakBenchmark.Row> rows,
            List<SoakGoals.Verdict> verdicts, double leftoverSeconds) throws IOException {
        LoadReport.json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        List<SoakBenchmark.Row> soakRows = rows.stream().map(CombinedSoakBenchmark.Row::soakRow).toList();
        SoakReport.plot(out.resolve("memory.png"), "Serval during the combined soak: memory", "MB", soakRows, List.of(
                Map.entry("heap after full GC", SoakBenchmark.Row::heapAfterGcMb),
                Map.entry("RSS", SoakBenchmark.Row::rssMb)), true);
        SoakReport.plot(out.resolve("latency.png"), "Serval during the combined soak: REST MiniLM latency per "
                + "interval, from intended send time", "ms (log scale)", soakRows, List.of(
                Map.entry("p50", SoakBenchmark.Row::p50), Map.entry("p99", SoakBenchmark.Row::p99),
                Map.entry("max", SoakBenchmark.Row::max)), false);
        Files.writeString(out.resolve("summary.md"), markdown(report, settings, saturation, streams, hostile, changes,
                rows, verdicts, leftoverSeconds));
        System.out.println();
        System.out.println(goalsTable(verdicts));
    }

    @SuppressWarnings("unchecked")
    static String markdown(Map<String, Object> report, CombinedSoakBenchmark.Settings settings, double saturation,
            List<CombinedSoakGoals.Stream> streams, List<CombinedSoakGoals.Hostile> hostile,
            List<CombinedSoakBenchmark.Change> changes, List<CombinedSoakBenchmark.Row> rows,
            List<SoakGoals.Verdict> verdicts, double leftoverSeconds) {
        StringBuilder md = new StringBuilder(LoadReport.header(report, "Serval combined soak"));
        md.append(String.format(Locale.ROOT, "The second wave's features at once on one Serval for %s "
                        + "(`bin/loadbench --combined-soak%s`): REST and gRPC open loops to MiniLM at %.0f %% and "
                        + "%.0f %% of its saturation (%.1f texts/s, a closed loop of 8 measured first: %.1f and %.1f "
                        + "requests/s); %.0f requests/s each to a pipeline (echo, then mlp), to %d multiplexed tiny "
                        + "models of which a replica holds %d (Zipf 1.1), and to the example Java handler (which "
                        + "embeds through MiniLM's handle); bursts of %s at %.0f/s, %s apart, to an autoscaled "
                        + "deployment with `min_replicas 0`; every %s a rolling update of mlp (under the pipeline's "
                        + "traffic) and a create, request and delete of a noop deployment through the management API "
                        + "(with its token); one hostile client every %s (stalled bodies, unfinished gRPC messages, "
                        + "gRPC calls never half-closed, bad shapes). Latency from each request's intended send time. "
                        + "Sampled every %s: each stream's answers, then a full GC forced in Serval through JMX and "
                        + "its heap just after, `VmRSS` and threads, and its buffered bytes and ongoing requests.%n%n",
                Options.human(settings.duration()), settings.mode().equals("quick") ? " --quick" : "",
                settings.restFraction() * 100, settings.grpcFraction() * 100, saturation,
                settings.restFraction() * saturation, settings.grpcFraction() * saturation, settings.sideRate(),
                CombinedSoakBenchmark.MUX_MODELS, CombinedSoakBenchmark.MUX_HELD, Options.human(settings.burst()),
                settings.sideRate(), Options.human(settings.pause()), Options.human(settings.changeEvery()),
                Options.human(settings.hostilePeriod()), Options.human(settings.interval())));
        double other = rows.stream().mapToDouble(CombinedSoakBenchmark.Row::otherCpu).max().orElse(0);
        md.append(String.format(Locale.ROOT, "The machine is shared with other workers (other processes used up to "
                + "%.2f of its cores in an interval, column \"other\"): absolute latencies say little; what the goals "
                + "rest on is errors by kind, flatness and what is left at the end.%n%n", other));
        md.append("## Goals (issue 37)\n\n").append(goalsTable(verdicts)).append('\n');
        md.append("Slopes: the least-squares line through the samples of the second half of the run, ± its standard "
                + "error, with the soak's thresholds (SoakGoals). Promised refusals: 503/429 with Retry-After, gRPC "
                + "UNAVAILABLE or RESOURCE_EXHAUSTED.\n\n");
        md.append("Not read (no meter exposes them):\n\n");
        ((Map<String, String>) report.get("notRead")).forEach((name, why) -> md.append("- ").append(name)
                .append(": ").append(why).append('\n'));
        md.append(String.format(Locale.ROOT, "%nThe end readings above were taken %.1f s after the load and the last "
                + "hostile client ended (read every second until all were zero, at most a minute).%n%n",
                leftoverSeconds));
        md.append("## Streams\n\n| stream | ok | errors by kind |\n|---|---:|---|\n");
        for (CombinedSoakGoals.Stream stream : streams) {
            md.append(String.format(Locale.ROOT, "| %s | %d | %s |%n", stream.name(), stream.ok(),
                    stream.errors().isEmpty() ? "0" : stream.errors()));
        }
        md.append("\n## Hostile clients\n\n| kind | promised answer | answers |\n|---|---|---|\n");
        for (CombinedSoakGoals.Hostile client : hostile) {
            md.append(String.format(Locale.ROOT, "| %s | %s | %s |%n", client.kind(), client.expected(),
                    client.outcomes()));
        }
        md.append("\n## Management changes\n\n| min | change | HTTP | ms until in effect | in effect |\n"
                + "|---:|---|---:|---:|---|\n");
        for (CombinedSoakBenchmark.Change change : changes) {
            md.append(String.format(Locale.ROOT, "| %.2f | %s | %d | %.0f | %s |%n", change.minutes(), change.action(),
                    change.status(), change.millis(), change.ok() ? "yes" : "**no**: " + change.detail()
                            .replace('\n', ' ').replace("|", "\\|")));
        }
        md.append("\n## Samples\n\np99 per stream and interval, ms (– when it had no answers); errors summed over the "
                + "streams.\n\n| min |");
        List<String> names = rows.size() > 1 ? List.copyOf(rows.get(1).streams().keySet()) : List.of();
        names.forEach(name -> md.append(' ').append(name).append(" |"));
        md.append(" REST ok | errors | CPU Serval / other | heap after GC MB | RSS MB | threads | buffered B "
                + "| ongoing | scaled |\n|---:|");
        names.forEach(name -> md.append("---:|"));
        md.append("---:|---|---|---:|---:|---:|---:|---:|---|\n");
        for (CombinedSoakBenchmark.Row row : rows) {
            md.append(String.format(Locale.ROOT, "| %.2f |", row.minutes()));
            for (String name : names) {
                CombinedSoakBenchmark.StreamInterval s = row.streams().get(name);
                md.append(' ').append(s == null ? "–" : ms(s.p99())).append(" |");
            }
            long errors = row.streams().values().stream().mapToLong(s -> s.errors().values().stream()
                    .mapToLong(Long::longValue).sum()).sum();
            CombinedSoakBenchmark.StreamInterval rest = row.streams().get(CombinedSoakBenchmark.REST);
            md.append(String.format(Locale.ROOT, " %d | %d | %.2f / %.2f | %.1f | %.1f | %d | %.0f | %.0f | %s |%n",
                    rest == null ? 0 : rest.ok(), errors, row.servalCpu(), row.otherCpu(), row.heapAfterGcMb(),
                    row.rssMb(), row.threads(), row.bufferedBytes(), row.ongoing(), row.scaledState()));
        }
        md.append("\nThe first row is the reading just before the load started. MB are MiB (2^20 bytes). \"scaled\": "
                + "the autoscaled deployment's state and running replicas at the sample.\n\n");
        md.append("## Counters at the end\n\nThose not at 0 (every series: `report.json`).\n\n");
        ((Map<String, Double>) report.get("counters")).forEach((series, value) -> {
            if (value != 0) {
                md.append(String.format(Locale.ROOT, "- `%s`: %.0f%n", series, value));
            }
        });
        md.append("\n![memory](memory.png)\n\n![latency](latency.png)\n\n");
        md.append("Settings, Serval's arguments, every sample and figure: `report.json`.\n");
        return md.toString();
    }

    private static String goalsTable(List<SoakGoals.Verdict> verdicts) {
        return SoakReport.goalsTable(verdicts, "not read");
    }

    private static String ms(double value) {
        return SoakReport.ms(value);
    }
}
