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
 * Writes the autoscaling ramp's results: {@code report.json} (everything, NaN as null), {@code summary.md} (what the
 * ramp shows, per phase, then every sample) and {@code replicas.png}: replicas desired and running (left axis) with
 * the served rate and p50/p99 latency (right axis) against time. Stateless.
 */
final class AutoscalingReport {

    private AutoscalingReport() {
    }

    static void write(Path out, Map<String, Object> report, double capacity, int cores, List<RampTimeline.Row> rows,
            Map<String, RunResult> phaseRuns) throws IOException {
        LoadReport.json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        plot(out.resolve("replicas.png"), rows);
        String summary = markdown(report, capacity, cores, rows, phaseRuns);
        Files.writeString(out.resolve("summary.md"), summary);
        System.out.println();
        System.out.println(findings(capacity, cores, rows, phaseRuns));
    }

    static String markdown(Map<String, Object> report, double capacity, int cores, List<RampTimeline.Row> rows,
            Map<String, RunResult> phaseRuns) {
        StringBuilder md = new StringBuilder(LoadReport.header(report, "Serval autoscaling ramp"));
        md.append("The MiniLM deployment, one predictor thread of one intra-op thread per replica, autoscaled: ")
                .append(AutoscalingBenchmark.AUTOSCALING).append(" (then `max_replicas` ").append(cores)
                .append("), `serval.autoscaling.period` 100ms, one short text per OIP request, open loop.\n\n");
        md.append(findings(capacity, cores, rows, phaseRuns)).append('\n');
        md.append("## Phases\n\n| phase | offered texts/s | answered texts/s | p50 ms | p99 ms | max ms | errors | most "
                + "replicas running |\n|---|---:|---:|---:|---:|---:|---|---:|\n");
        for (RampTimeline.Phase phase : AutoscalingBenchmark.PHASES) {
            RunResult run = phaseRuns.get(phase.name());
            int most = RampTimeline.maxRunning(rows, phase.name());
            if (run == null) {
                md.append(String.format(Locale.ROOT, "| %s (%s) | 0 | – | – | – | – | – | %d |%n", phase.name(),
                        Options.human(phase.duration()), most));
            } else {
                md.append(String.format(Locale.ROOT, "| %s (%s) | %.1f | %.1f | %.2f | %.2f | %.1f | %s | %d |%n",
                        phase.name(), Options.human(phase.duration()), run.offeredRate(), run.throughput(), run.p50(),
                        run.p99(), run.max(), run.errors().isEmpty() ? "0" : run.errors(), most));
            }
        }
        md.append("\n![replicas and latency](replicas.png)\n\n## Samples\n\n| s | phase | offered/s | answered/s | "
                + "p50 ms | p99 ms | errors | desired | running | starting | state | ongoing |\n"
                + "|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---|---:|\n");
        for (RampTimeline.Row row : rows) {
            md.append(String.format(Locale.ROOT, "| %.1f | %s | %.1f | %.1f | %s | %s | %s | %d | %d | %d | %s | %s |%n",
                    row.seconds(), row.phase(), row.offered(), row.served(), ms(row.p50()), ms(row.p99()),
                    row.errors().isEmpty() ? "0" : row.errors(), row.desired(), row.running(), row.starting(),
                    row.state(), Double.isNaN(row.ongoing()) ? "–" : String.format(Locale.ROOT, "%.2f",
                            row.ongoing())));
        }
        md.append("\nLatencies are from each request's intended send time; a sample holds what completed in the half "
                + "second before it. Every figure: `report.json`.\n");
        return md.toString();
    }

    /** What the ramp shows: the step response, the way to zero, the cold start, and the checks. */
    static String findings(double capacity, int cores, List<RampTimeline.Row> rows, Map<String, RunResult> phaseRuns) {
        List<RampTimeline.Phase> phases = AutoscalingBenchmark.PHASES;
        double step = RampTimeline.start(phases, "step up");
        double idle = RampTimeline.start(phases, "idle");
        double toTwo = RampTimeline.untilRunning(rows, step, Math.min(2, cores));
        double toZero = RampTimeline.untilZero(rows, idle);
        RunResult cold = phaseRuns.get("cold start");
        RunResult low = phaseRuns.get("low");
        long stray = RampTimeline.errorsOutside(rows, "cold start");
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "One replica answered **%.1f texts/s** (closed loop, 4 connections).%n%n",
                capacity));
        md.append("| figure | value | check |\n|---|---:|---|\n");
        md.append(String.format(Locale.ROOT, "| step up (%.1f× one replica): until %d replicas RUNNING | %s | %s |%n",
                phases.get(1).multiple(), Math.min(2, cores), seconds(toTwo), Double.isNaN(toTwo) ? "**no**" : "yes"));
        md.append(String.format(Locale.ROOT, "| idle: until zero replicas | %s | %s |%n", seconds(toZero),
                Double.isNaN(toZero) ? "**no**" : "yes"));
        if (cold != null && low != null) {
            md.append(String.format(Locale.ROOT, "| cold start: slowest request after zero (max) vs a warm p50 | %.0f "
                    + "ms vs %.2f ms | |%n", cold.max(), low.p50()));
        }
        md.append(String.format(Locale.ROOT, "| errors outside the cold start | %d | %s |%n", stray,
                stray == 0 ? "yes" : "**no**"));
        if (cold != null) {
            md.append(String.format(Locale.ROOT, "| errors during the cold start (bounded refusals allowed) | %s | |%n",
                    cold.errors().isEmpty() ? "0" : cold.errors()));
        }
        return md.toString();
    }

    private static String seconds(double value) {
        return Double.isNaN(value) ? "never" : String.format(Locale.ROOT, "%.1f s", value);
    }

    private static String ms(double value) {
        return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static void plot(Path file, List<RampTimeline.Row> rows) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(1100).height(600).title("Serval autoscaling ramp: replicas, "
                + "answered rate and latency").xAxisTitle("seconds since the first phase began").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
        chart.getStyler().setMarkerSize(3);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        series(chart, rows, "replicas desired", r -> r.desired(), 0);
        series(chart, rows, "replicas running", r -> r.running(), 0);
        series(chart, rows, "answered texts/s ÷ 100", r -> r.served() / 100, 0);
        series(chart, rows, "p50 ms", RampTimeline.Row::p50, 1);
        series(chart, rows, "p99 ms", RampTimeline.Row::p99, 1);
        chart.setYAxisGroupTitle(0, "replicas; texts/s ÷ 100");
        chart.setYAxisGroupTitle(1, "latency ms");
        chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        chart.getStyler().setYAxisLogarithmic(false);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void series(XYChart chart, List<RampTimeline.Row> rows, String name,
            ToDoubleFunction<RampTimeline.Row> value, int axis) {
        List<RampTimeline.Row> usable = rows.stream().filter(r -> !Double.isNaN(value.applyAsDouble(r))
                && (axis == 0 || value.applyAsDouble(r) > 0)).toList();
        if (usable.isEmpty()) {
            return;
        }
        XYSeries series = chart.addSeries(name, usable.stream().mapToDouble(RampTimeline.Row::seconds).toArray(),
                usable.stream().mapToDouble(value).toArray());
        series.setYAxisGroup(axis);
    }
}
