package dev.serval.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;

/**
 * Writes the soak's results: {@code report.json} (everything, NaN as null), {@code summary.md} (the goals, then every
 * sample) and two PNGs against time: {@code memory.png} (heap after GC and RSS) and {@code latency.png} (p50, p99 and
 * max per interval). Stateless.
 */
final class SoakReport {

    private SoakReport() {
    }

    static void write(Path out, Map<String, Object> report, SoakBenchmark.Settings settings, double saturation,
            RunResult soak, List<SoakBenchmark.Row> rows, List<SoakGoals.Verdict> verdicts) throws IOException {
        LoadReport.json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        plot(out.resolve("memory.png"), "Serval during the soak: memory", "MB", rows, List.of(
                Map.entry("heap after full GC", SoakBenchmark.Row::heapAfterGcMb),
                Map.entry("RSS", SoakBenchmark.Row::rssMb)), true);
        plot(out.resolve("latency.png"), "Serval during the soak: latency per interval, from intended send time",
                "ms (log scale)", rows, List.of(Map.entry("p50", SoakBenchmark.Row::p50),
                        Map.entry("p99", SoakBenchmark.Row::p99), Map.entry("max", SoakBenchmark.Row::max)), false);
        Files.writeString(out.resolve("summary.md"), markdown(report, settings, saturation, soak, rows, verdicts));
        System.out.println();
        System.out.println(goalsTable(verdicts));
    }

    static String markdown(Map<String, Object> report, SoakBenchmark.Settings settings, double saturation,
            RunResult soak, List<SoakBenchmark.Row> rows, List<SoakGoals.Verdict> verdicts) {
        StringBuilder md = new StringBuilder(LoadReport.header(report, "Serval soak"));
        double gcMean = rows.stream().skip(1).mapToDouble(SoakBenchmark.Row::gcMillis).average().orElse(Double.NaN);
        double gcMax = rows.stream().skip(1).mapToDouble(SoakBenchmark.Row::gcMillis).max().orElse(Double.NaN);
        md.append(String.format(Locale.ROOT, "Serval's default configuration (the MiniLM deployment, one short text per "
                        + "OIP request). Saturation **%.1f texts/s** (the better of 4 and 16 closed-loop clients); the "
                        + "soak offered **%.1f/s (%.0f %%)** open loop for %s: **%.1f texts/s answered, %d ok, errors "
                        + "%s**; over the whole run p50 %.2f, p99 %.2f, p99.9 %.2f, max %.1f ms (from each request's "
                        + "intended send time). Sampled every %s: the interval's answers, then a full GC forced in "
                        + "Serval through JMX (`MemoryMXBean.gc()`, i.e. `System.gc()`; mean %.0f ms, max %.0f ms, "
                        + "counted in the next interval's latencies) and the heap used just after it, then `VmRSS` "
                        + "and threads from `/proc/<pid>/status`.%n%n", saturation, soak.offeredRate(),
                settings.fraction() * 100, Options.human(settings.duration()), soak.throughput(), soak.successes(),
                soak.errors().isEmpty() ? "0" : soak.errors(), soak.p50(), soak.p99(), soak.p999(), soak.max(),
                Options.human(settings.interval()), gcMean, gcMax));
        double other = rows.stream().mapToDouble(SoakBenchmark.Row::otherCpu).max().orElse(0);
        if (other > OverloadReport.DISTURBED) {
            md.append(String.format(Locale.ROOT, "**Disturbed run**: other processes used up to %.2f of the two cores "
                    + "in an interval (column \"other\").%n%n", other));
        }
        md.append("## Goals (issue 14)\n\n").append(goalsTable(verdicts)).append('\n');
        md.append("Slopes: the least-squares line through the samples of the second half of the run (the first holds "
                + "the JIT, the heap settling and native arenas growing, which level off; a leak does not), ± its "
                + "standard error. RSS swings by tens of MB as G1 gives back heap after each forced GC and takes it "
                + "again; RSS minus heap committed leaves that out.\n\n");
        md.append("## Samples\n\n");
        md.append("| min | ok | errors | p50 ms | p99 ms | max ms | CPU Serval / other | heap after GC MB "
                + "| heap committed MB | non-heap MB | RSS MB | threads | GC ms |\n");
        md.append("|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for (SoakBenchmark.Row row : rows) {
            md.append(String.format(Locale.ROOT, "| %.2f | %d | %s | %s | %s | %s | %.2f / %.2f | %.1f | %.0f | %.1f "
                            + "| %.1f | %d | %.0f |%n", row.minutes(), row.successes(),
                    row.errors().isEmpty() ? "0" : row.errors(), ms(row.p50()), ms(row.p99()), ms(row.max()),
                    row.servalCpu(), row.otherCpu(), row.heapAfterGcMb(), row.heapCommittedMb(), row.nonHeapMb(),
                    row.rssMb(), row.threads(), row.gcMillis()));
        }
        md.append("\nThe first row is the reading just before the load started. MB are MiB (2^20 bytes).\n\n");
        md.append("![memory](memory.png)\n\n![latency](latency.png)\n\n");
        md.append("Settings, Serval's arguments, the saturation runs and every figure: `report.json`.\n");
        return md.toString();
    }

    static String goalsTable(List<SoakGoals.Verdict> verdicts) {
        return goalsTable(verdicts, "n/a (too few samples)");
    }

    /** The goals as a Markdown table; a figure that could not be computed reads {@code missing}. */
    static String goalsTable(List<SoakGoals.Verdict> verdicts, String missing) {
        StringBuilder md = new StringBuilder("| figure | value | goal | met |\n|---|---:|---|---|\n");
        for (SoakGoals.Verdict verdict : verdicts) {
            String value = Double.isNaN(verdict.value()) ? missing
                    : verdict.unit().isEmpty() ? String.format(Locale.ROOT, "%.0f", verdict.value())
                    : String.format(Locale.ROOT, "%+.3f ± %.3f %s", verdict.value(), verdict.standardError(),
                            verdict.unit());
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", verdict.figure(), value, verdict.goal(),
                    verdict.met() == null ? "" : verdict.met() ? "yes" : "**no**"));
        }
        return md.toString();
    }

    static String ms(double value) {
        return Double.isNaN(value) ? "–" : value >= 100 ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

    /** One line per named series; with {@code linear}, the second series on its own axis (RSS beside the heap). */
    static void plot(Path file, String title, String yTitle, List<SoakBenchmark.Row> rows,
            List<Map.Entry<String, ToDoubleFunction<SoakBenchmark.Row>>> lines, boolean linear) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(960).height(600).title(title).xAxisTitle("minutes since the load "
                + "started").yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setMarkerSize(5);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisLogarithmic(!linear);
        boolean any = false;
        for (int i = 0; i < lines.size(); i++) {
            ToDoubleFunction<SoakBenchmark.Row> value = lines.get(i).getValue();
            List<SoakBenchmark.Row> usable = rows.stream().filter(r -> {
                double y = value.applyAsDouble(r);
                return !Double.isNaN(y) && (linear || y > 0);
            }).toList();
            if (usable.isEmpty()) {
                continue;
            }
            any = true;
            XYSeries series = chart.addSeries(lines.get(i).getKey(), usable.stream().mapToDouble(SoakBenchmark.Row::minutes)
                    .toArray(), usable.stream().mapToDouble(value).toArray());
            if (linear && i == 1) {
                series.setYAxisGroup(1); // RSS is ten times the heap: its own axis, so both show their changes
                chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
                chart.setYAxisGroupTitle(1, "RSS MB");
                chart.setYAxisGroupTitle(0, "heap after full GC MB");
            }
        }
        if (any) {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
