package dev.serval.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes the overload benchmark's results: {@code report.json} (everything, NaN as null), {@code summary.md} (the
 * goals at 10 &times; C, then every multiple) and two PNGs against the offered multiple of C: {@code goodput.png}
 * (goodput / C) and {@code latency.png} (refusal and admitted latency with the bound, and the no-op reference's p99).
 * Stateless.
 */
final class OverloadReport {

    /** A share of the cores used by other processes above which a run is reported as disturbed. */
    static final double DISTURBED = 0.10;
    /** How far C measured after the overloads may be from C before them before the report says so. */
    static final double CAPACITY_DRIFT = 0.10;

    private OverloadReport() {
    }

    static void write(Path out, Map<String, Object> report, OverloadBenchmark.Settings settings,
            OverloadBenchmark.Capacity capacity, OverloadBenchmark.Reference reference,
            List<OverloadBenchmark.Step> steps) throws IOException {
        LoadReport.json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        plotGoodput(out, steps);
        plotLatency(out, capacity, reference, steps);
        String markdown = markdown(report, settings, capacity, reference, steps);
        Files.writeString(out.resolve("summary.md"), markdown);
        System.out.println();
        System.out.println(goalsTable(steps));
    }

    static String markdown(Map<String, Object> report, OverloadBenchmark.Settings settings,
            OverloadBenchmark.Capacity capacity, OverloadBenchmark.Reference reference,
            List<OverloadBenchmark.Step> steps) {
        StringBuilder md = new StringBuilder(LoadReport.header(report, "Serval overload benchmark"));
        md.append(String.format(Locale.ROOT, "The default MiniLM deployment (batch-invariant, 2 predictor threads, 1 "
                        + "replica) with `max_queued_requests: %d` and `max_ongoing_requests: %d`; one short text per "
                        + "%s. **C = %.1f texts/s** (4 closed-loop clients); single-request p50 %.2f ms; the "
                        + "bound on admitted latency is (%d + %d) / C + that p50 = **%.1f ms**. Open-loop arrivals at "
                        + "each multiple of C for %s after %s of unrecorded warm-up, latency from each request's "
                        + "intended send time; the client is a keep-alive pool of at most %d connections. After the "
                        + "last multiple, C again: **%.1f texts/s (%.2f of C)**.%n%n", OverloadBenchmark.MAX_QUEUED,
                OverloadBenchmark.MAX_ONGOING, settings.openAi() ? "OpenAI embeddings request (`/v1/embeddings`)"
                        : "OIP request", capacity.capacity(), capacity.singleP50(), OverloadBenchmark.MAX_QUEUED,
                OverloadBenchmark.MAX_ONGOING, capacity.boundMillis(), Options.human(settings.duration()),
                Options.human(settings.warmUp()), settings.connections(), capacity.recovered(),
                capacity.recovered() / capacity.capacity()));
        double disturbed = Math.max(steps.stream().mapToDouble(s -> s.run().cpu().other()).max().orElse(0),
                capacity.otherCpu());
        if (disturbed > DISTURBED) {
            md.append(String.format(Locale.ROOT, "**Disturbed run**: processes other than the load generator and Serval "
                    + "used up to %.2f of the two cores during a measurement (column \"other\" below; C's run: %.2f). "
                    + "C and every ratio to it are then not Serval's alone: repeat on a quiet machine.%n%n", disturbed,
                    capacity.otherCpu()));
        }
        double drift = capacity.recovered() / capacity.capacity() - 1;
        if (Math.abs(drift) > CAPACITY_DRIFT) {
            md.append(String.format(Locale.ROOT, "**C moved during the run**: measured again after the overloads it was "
                    + "%+.0f %% off. %s%n%n", drift * 100, drift > 0 ? "A disturbance from elsewhere lowered the "
                    + "first measurement (it can only lower a figure), so the offered multiples were really smaller and "
                    + "the ratios to C are too high." : "Serval did not recover its capacity after the overloads, or the "
                    + "machine got busier."));
        }
        md.append("## Goals (issue 14), at ").append(String.format(Locale.ROOT, "%.0f", OverloadGoals.GOAL_MULTIPLE))
                .append(" × C\n\n");
        md.append(goalsTable(steps)).append('\n');
        RunResult noop = reference.run();
        md.append(String.format(Locale.ROOT, "**Reference**: a request that does no work (Serval's `noop` model) at the "
                        + "same rate, %.0f × C = %.0f requests/s, open loop: p50 %s, p99 %s, max %s ms, errors %s. The "
                        + "issue asks a refusal to cost about that.%n%n", reference.multiple(), noop.offeredRate(),
                ms(noop.p50()), ms(noop.p99()), ms(noop.max()), noop.errors().isEmpty() ? "0" : noop.errors()));
        md.append("## Every multiple\n\n");
        md.append("| offered | offered/s | goodput / C | 200 | refusals by status | improper | no HTTP answer "
                + "| refusal p50 / p99 / max ms | Retry-After p50 ms (with retry-after-ms) | admitted p50 / p99 ms "
                + "| p99 / bound | connections peak / opened | connection wait p99 ms | CPU gen / Serval / other "
                + "| Serval RSS MB | Serval queue wait / inference ms | goals |\n");
        md.append("|---|---:|---:|---:|---|---:|---:|---|---|---|---:|---|---:|---|---:|---|---|\n");
        for (OverloadBenchmark.Step step : steps) {
            RunResult run = step.run();
            RunResult.Refusals refusals = run.refusals();
            Map<String, Double> metrics = run.serverMetrics();
            long failedVerdicts = step.verdicts().stream().filter(v -> !v.met()).count();
            md.append(String.format(Locale.ROOT, "| %.0f × C | %.0f | %.3f | %d | %s | %d | %s | %s / %s / %s | %s (%d) "
                            + "| %s / %s | %.2f | %d / %d | %s | %.2f / %.2f / %.2f | %.0f | %s / %s | %s |%n",
                    step.multiple(), run.offeredRate(), run.throughput() / capacity.capacity(), run.successes(),
                    byStatus(run.errors()), refusals.improper(), unanswered(run), ms(refusals.p50()),
                    ms(refusals.p99()), ms(refusals.max()), ms(refusals.retryAfterP50Millis()),
                    refusals.withRetryAfterMs(), ms(run.p50()), ms(run.p99()), run.p99() / capacity.boundMillis(),
                    run.client().peak(), run.client().opened(), ms(run.client().waitP99()), run.cpu().generator(),
                    run.cpu().server(), run.cpu().other(), step.servalRssMb(), ms(metrics.getOrDefault(
                            "meanQueueWaitMillis", Double.NaN)), ms(metrics.getOrDefault("meanInferenceMillis",
                            Double.NaN)), failedVerdicts == 0 ? "all met" : failedVerdicts + " not met"));
        }
        md.append("""

                Goodput: texts answered 200 per second, of the requests intended inside the window (one text per \
                request). Refusals: every answer other than 200; improper: those that were not 429 or 503 with a \
                `Retry-After` header. No HTTP answer: connection errors and timeouts (by exception) and requests \
                still unanswered when the run stopped waiting (`unfinished`: sent; `unsent`: still waiting in the \
                client for a connection). Latencies run from each request's intended send time, \
                so a wait for a free connection of the client's pool counts; the connection wait p99 shows it apart \
                (near zero: the pool was not a limit). CPU: shares of both cores over the window (the load \
                generator's JVM, Serval, everything else). Serval's queue wait and inference time are its own meters' \
                means over the run, warm-up and drain included.

                """);
        md.append("![goodput](goodput.png)\n\n![latency](latency.png)\n\n");
        md.append("Settings, Serval's arguments, the capacity runs and every figure: `report.json`.\n");
        return md.toString();
    }

    /** The goals at 10 × C (or the multiple nearest to it), one row each. */
    static String goalsTable(List<OverloadBenchmark.Step> steps) {
        StringBuilder md = new StringBuilder("| figure | at | value | goal | met |\n|---|---|---:|---|---|\n");
        steps.stream().min((a, b) -> Double.compare(Math.abs(a.multiple() - OverloadGoals.GOAL_MULTIPLE),
                Math.abs(b.multiple() - OverloadGoals.GOAL_MULTIPLE))).ifPresent(step -> {
                    for (OverloadGoals.Verdict verdict : step.verdicts()) {
                        md.append(String.format(Locale.ROOT, "| %s | %.0f × C | %s | %s | %s |%n", verdict.figure(),
                                verdict.multiple(), number(verdict.value()), verdict.goal(),
                                verdict.met() ? "yes" : "**no**"));
                    }
                });
        return md.toString();
    }

    private static String byStatus(Map<String, Long> errors) {
        StringBuilder text = new StringBuilder();
        errors.forEach((kind, count) -> {
            if (kind.startsWith("HTTP ")) {
                text.append(text.isEmpty() ? "" : ", ").append(kind.substring(5)).append(": ").append(count);
            }
        });
        return text.isEmpty() ? "none" : text.toString();
    }

    private static String unanswered(RunResult run) {
        StringBuilder text = new StringBuilder(Long.toString(run.unanswered()));
        if (run.unanswered() > 0) {
            text.append(" (");
            boolean first = true;
            for (Map.Entry<String, Long> entry : run.errors().entrySet()) {
                if (!entry.getKey().startsWith("HTTP ")) {
                    text.append(first ? "" : ", ").append(entry.getKey()).append(": ").append(entry.getValue());
                    first = false;
                }
            }
            text.append(')');
        }
        return text.toString();
    }

    private static String number(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        return value == Math.rint(value) ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.3f", value);
    }

    private static String ms(double value) {
        return Double.isNaN(value) ? "–" : value >= 100 ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

    private static XYChart chart(String title, String yTitle) {
        XYChart chart = new XYChartBuilder().width(960).height(600).title(title)
                .xAxisTitle("offered load (multiple of C, open loop)").yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setMarkerSize(7);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setXAxisMin(0.0);
        return chart;
    }

    private static void plotGoodput(Path out, List<OverloadBenchmark.Step> steps) throws IOException {
        System.setProperty("java.awt.headless", "true");
        if (steps.isEmpty()) {
            return;
        }
        XYChart chart = chart("Serval under overload: goodput / capacity C", "goodput / C");
        chart.getStyler().setYAxisMin(0.0);
        double[] x = steps.stream().mapToDouble(OverloadBenchmark.Step::multiple).toArray();
        double capacity = steps.getFirst().run().offeredRate() / steps.getFirst().multiple();
        chart.addSeries("goodput / C", x, steps.stream().mapToDouble(s -> s.run().throughput() / capacity).toArray());
        XYSeries goal = chart.addSeries("goal at 10 x C: 0.85", new double[] {0, x[x.length - 1]},
                new double[] {OverloadGoals.MIN_GOODPUT_RATIO, OverloadGoals.MIN_GOODPUT_RATIO});
        goal.setLineStyle(SeriesLines.DOT_DOT);
        goal.setLineColor(java.awt.Color.GRAY);
        goal.setMarker(SeriesMarkers.NONE);
        BitmapEncoder.saveBitmap(chart, out.resolve("goodput.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void plotLatency(Path out, OverloadBenchmark.Capacity capacity,
            OverloadBenchmark.Reference reference, List<OverloadBenchmark.Step> steps) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = chart("Serval under overload: latency from intended send time", "ms (log scale)");
        chart.getStyler().setYAxisLogarithmic(true);
        String[] names = {"admitted p50", "admitted p99", "refusal p50", "refusal p99"};
        java.awt.Color[] colors = {new java.awt.Color(0x1f77b4), new java.awt.Color(0x9467bd),
            new java.awt.Color(0xff7f0e), new java.awt.Color(0xd62728)};
        boolean any = false;
        for (int i = 0; i < names.length; i++) {
            List<double[]> points = new java.util.ArrayList<>();
            for (OverloadBenchmark.Step step : steps) {
                RunResult run = step.run();
                double value = switch (i) {
                    case 0 -> run.p50();
                    case 1 -> run.p99();
                    case 2 -> run.refusals().p50();
                    default -> run.refusals().p99();
                };
                if (!Double.isNaN(value) && value > 0) {
                    points.add(new double[] {step.multiple(), value});
                }
            }
            if (points.isEmpty()) {
                continue;
            }
            any = true;
            XYSeries series = chart.addSeries(names[i], points.stream().mapToDouble(p -> p[0]).toArray(),
                    points.stream().mapToDouble(p -> p[1]).toArray());
            series.setLineColor(colors[i]);
            series.setMarkerColor(colors[i]);
        }
        if (!any || steps.isEmpty()) {
            return;
        }
        double last = steps.getLast().multiple();
        XYSeries bound = chart.addSeries("admitted bound", new double[] {0, last},
                new double[] {capacity.boundMillis(), capacity.boundMillis()});
        bound.setLineStyle(SeriesLines.DASH_DASH);
        bound.setLineColor(java.awt.Color.GRAY);
        bound.setMarker(SeriesMarkers.NONE);
        XYSeries refusalGoal = chart.addSeries("refusal p99 goal (20 ms)", new double[] {0, last},
                new double[] {OverloadGoals.MAX_REFUSAL_P99_MILLIS, OverloadGoals.MAX_REFUSAL_P99_MILLIS});
        refusalGoal.setLineStyle(SeriesLines.DOT_DOT);
        refusalGoal.setLineColor(java.awt.Color.RED);
        refusalGoal.setMarker(SeriesMarkers.NONE);
        double noopP99 = reference.run().p99();
        if (!Double.isNaN(noopP99) && noopP99 > 0) {
            XYSeries noop = chart.addSeries(String.format(Locale.ROOT, "noop p99 at %.0f x C's rate",
                    reference.multiple()), new double[] {reference.multiple()}, new double[] {noopP99});
            noop.setMarker(SeriesMarkers.DIAMOND);
            noop.setMarkerColor(java.awt.Color.BLACK);
            noop.setLineColor(java.awt.Color.BLACK);
        }
        BitmapEncoder.saveBitmap(chart, out.resolve("latency.png").toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
