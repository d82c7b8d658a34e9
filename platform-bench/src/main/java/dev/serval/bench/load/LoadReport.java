package dev.serval.bench.load;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Writes a load benchmark's results: {@code report.json} (everything, NaN as null), {@code summary.md} (the goals
 * with each Serval figure as a ratio of its limit, then every run) and {@code latency-<workload>.png} (latency
 * percentiles against offered load, XChart). Stateless.
 */
final class LoadReport {

    /** One colour per percentile (p50, p90, p99, p99.9), shared by Serval (solid) and the bare server (dashed). */
    private static final java.awt.Color[] COLORS = {new java.awt.Color(0x1f77b4), new java.awt.Color(0xff7f0e),
        new java.awt.Color(0x9467bd), new java.awt.Color(0x2ca02c)};

    private LoadReport() {
    }

    static void write(Path out, Map<String, Object> report, List<RunResult> runs, Map<String, Object> limits)
            throws IOException {
        List<Goals.Goal> goals = Goals.evaluate(runs, limits);
        report.put("goals", goals);
        json().writerWithDefaultPrettyPrinter().writeValue(out.resolve("report.json").toFile(), report);
        List<String> plots = plot(out, runs);
        Files.writeString(out.resolve("summary.md"), markdown(report, goals, runs, limits, plots));
        System.out.println();
        System.out.println(goalsTable(goals));
    }

    /** Jackson with NaN and infinities written as null (so that the file stays valid JSON), durations in seconds. */
    static ObjectMapper json() {
        SimpleModule nanAsNull = new SimpleModule();
        JsonSerializer<Double> serializer = new JsonSerializer<>() {
            @Override
            public void serialize(Double value, JsonGenerator generator, SerializerProvider provider) throws IOException {
                if (value == null || value.isNaN() || value.isInfinite()) {
                    generator.writeNull();
                } else {
                    generator.writeNumber(value);
                }
            }
        };
        nanAsNull.addSerializer(Double.class, serializer);
        nanAsNull.addSerializer(double.class, serializer);
        nanAsNull.addSerializer(Duration.class, new JsonSerializer<>() {
            @Override
            public void serialize(Duration value, JsonGenerator generator, SerializerProvider provider) throws IOException {
                generator.writeNumber(value.toMillis() / 1e3); // in seconds
            }
        });
        return new ObjectMapper().registerModule(nanAsNull);
    }

    /**
     * The opening of a report's Markdown: its title, then the commit measured (when the report records one), the run's
     * start, the machine, the JVM, the load average around the run and its duration.
     */
    @SuppressWarnings("unchecked")
    static String header(Map<String, Object> report, String title) {
        Map<String, Object> machine = (Map<String, Object>) report.get("machine");
        Map<String, Object> jvm = (Map<String, Object>) report.get("jvm");
        Map<String, Object> commit = (Map<String, Object>) report.get("commit");
        String measured = commit == null ? "" : String.format(java.util.Locale.ROOT, "Commit `%s` (%s)%s. ",
                commit.get("sha"), commit.get("subject"),
                ((List<?>) commit.get("uncommittedChanges")).isEmpty() ? "" : ", with uncommitted changes");
        return "# " + title + " (" + report.get("mode") + " mode)\n\n" + measured + String.format(java.util.Locale.ROOT,
                "%s; %s CPUs, %s; Java %s (%s); load average %s before, %s after; %s s.%n%n", report.get("startedAt"),
                machine.get("cpus"), machine.get("os"), jvm.get("version"), jvm.get("vm"),
                machine.get("loadAverageBefore"), machine.get("loadAverageAfter"), report.get("durationSeconds"));
    }

    private static String markdown(Map<String, Object> report, List<Goals.Goal> goals, List<RunResult> runs,
            Map<String, Object> limits, List<String> plots) {
        StringBuilder md = new StringBuilder(header(report, "Serval load benchmark"));
        md.append("Every Serval figure next to its limit, measured in the same run with the same client (a Vert.x "
                + "HTTP/1.1 client on one event loop, in its own JVM). Latencies are from each request's intended "
                + "send time. The load generator, the server and anything else running share the same cores: see the "
                + "CPU columns below.\n\n");
        md.append(goalsTable(goals)).append('\n');
        if (limits.get("raw") instanceof RawLimits raw) {
            md.append(limitTables(raw));
            if (limits.get("servalBatch") instanceof Map<?, ?> batch) {
                md.append("Serval's max-batch-size: ").append(batch.get("batch")).append(" (").append(batch.get("from"))
                        .append("). ");
            }
            if (limits.get("fp32Batch") instanceof Map<?, ?> fp32) {
                md.append("The fp32 workload's limit: batch ").append(fp32.get("batch")).append(" (")
                        .append(fp32.get("from")).append("; Serval batches the fp32 model as shipped). ");
            }
            md.append("The DJL loop at each workload's split and batch size, just before and just after its closed "
                    + "loops: `").append(limits.get("rawInterleaved")).append("`\n\n");
        }
        if (limits.get(LoadBenchmark.RAW_AROUND_DEFAULT) instanceof RawLimits around) {
            md.append(limitsAroundDefault(around));
        }
        md.append("## Runs\n\n");
        md.append("| target | workload | load | req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors "
                + "| send lag p99 ms | CPU generator / server / other | Serval mean take | Serval mean batch |\n");
        md.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|\n");
        for (RunResult run : runs) {
            Double batch = run.serverMetrics().get("meanBatchSize");
            Double take = run.serverMetrics().get("inputsPerInference");
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f / %.2f / %.2f | %s | %s |%n",
                    run.target(), run.workload(), run.shape(), run.throughput(), ms(run.p50()), ms(run.p90()),
                    ms(run.p99()), ms(run.p999()), ms(run.max()), run.errors().isEmpty() ? "0" : run.errors(),
                    ms(run.sendLagP99()), run.cpu().generator(), run.cpu().server(), run.cpu().other(),
                    take == null || take.isNaN() ? "" : String.format(Locale.ROOT, "%.1f", take),
                    batch == null || batch.isNaN() ? "" : String.format(Locale.ROOT, "%.1f", batch)));
        }
        md.append("\nCPU: shares of all cores over each measurement window, from /proc: the load generator's JVM, the "
                + "server's process, and everything else on the machine (a large \"other\" share means the run was "
                + "disturbed). Serval mean take: inputs per inference a predictor took (one batch, before a text model "
                + "cuts it into groups of similar length); Serval mean batch: texts per batched inference (per group), "
                + "both from Serval's own meters over the run (warm-up included); the batch is blank for models "
                + "that run texts alone.\n\n");
        for (String plot : plots) {
            md.append("![").append(plot).append("](").append(plot).append(")\n\n");
        }
        md.append("Settings, Serval's arguments, the captured responses and every figure: `report.json`.\n");
        return md.toString();
    }

    /** The batch-1 limits measured around the default configuration's runs, as one paragraph. */
    static String limitsAroundDefault(RawLimits around) {
        List<String> figures = new ArrayList<>();
        for (RawLimits.Rate rate : around.rates()) {
            figures.add(String.format(Locale.ROOT, "%s %s batch %d: %.0f texts/s", rate.runtime(), rate.split().label(),
                    rate.batch(), rate.textsPerSecond()));
        }
        for (RawLimits.Single single : around.singles()) {
            figures.add(String.format(Locale.ROOT, "%s %s single-text p50 %.3f ms", single.runtime(),
                    single.split().label(), single.p50()));
        }
        return "The batch-1 limits measured again just before and just after the default configuration's runs (the "
                + "better of the two): " + String.join("; ", figures) + ".\n\n";
    }

    /**
     * "The limit": texts/s of every raw runtime x split x batch size with the single-text p50, the DJL loop over
     * Python at the same onnxruntime version, and what each runtime ran with (or why it was not measured).
     */
    static String limitTables(RawLimits raw) {
        StringBuilder md = new StringBuilder("## The limit\n\n");
        md.append("Raw loops over the same texts as the load generator, no HTTP, no queue: texts/s of each runtime at "
                + "each thread split (workers x intra-op threads, each worker with its own session) and batch size "
                + "(best pass), and one worker's single-text latency (batch 1, p50 and p99, ms).\n\n");
        List<String> sets = raw.rates().stream().map(RawLimits.Rate::set).distinct().toList();
        List<Integer> batches = raw.rates().stream().map(RawLimits.Rate::batch).distinct().sorted().toList();
        md.append("| runtime | texts | split |");
        batches.forEach(b -> md.append(" batch ").append(b).append(" |"));
        md.append(" single-text p50 / p99 ms |\n|---|---|---|");
        batches.forEach(b -> md.append("---:|"));
        md.append("---:|\n");
        for (RawLimits.Runtime runtime : raw.runtimes()) {
            if (!runtime.measured()) {
                continue;
            }
            for (String set : sets.isEmpty() ? List.of("short") : sets) {
                for (RawLimits.Split split : raw.splits()) {
                    List<String> cells = new ArrayList<>();
                    boolean any = false;
                    for (int batch : batches) {
                        java.util.OptionalDouble rate = raw.rate(runtime.name(), set, split, batch);
                        boolean best = rate.isPresent() && raw.bestAt(set, batch).map(b -> b.textsPerSecond()
                                == rate.getAsDouble()).orElse(false);
                        cells.add(rate.isEmpty() ? "" : String.format(Locale.ROOT, best ? "**%.0f**" : "%.0f",
                                rate.getAsDouble()));
                        any |= rate.isPresent();
                    }
                    String single = !set.equals("short") ? "" : raw.singles().stream()
                            .filter(s -> s.runtime().equals(runtime.name()) && s.split().equals(split)).findFirst()
                            .map(s -> String.format(Locale.ROOT, "%.2f / %.2f", s.p50(), s.p99())).orElse("");
                    if (any || !single.isEmpty()) {
                        md.append("| ").append(runtime.name()).append(" | ").append(set).append(" | ")
                                .append(split.label()).append(" | ").append(String.join(" | ", cells)).append(" | ")
                                .append(single).append(" |\n");
                    }
                }
            }
        }
        md.append("\nBold: the best figure at that batch size on those texts.\n\n");
        List<RawLimits.Ratio> ratios = raw.javaOverPython("short");
        if (!ratios.isEmpty()) {
            md.append("The DJL loop over ").append(raw.pythonAtJavaVersion().orElseThrow().name())
                    .append(" (the same ONNX Runtime version), short texts:\n\n| split |");
            List<Integer> ratioBatches = ratios.stream().map(RawLimits.Ratio::batch).distinct().sorted().toList();
            ratioBatches.forEach(b -> md.append(" batch ").append(b).append(" |"));
            md.append("\n|---|");
            ratioBatches.forEach(b -> md.append("---:|"));
            md.append('\n');
            for (RawLimits.Split split : ratios.stream().map(RawLimits.Ratio::split).distinct().toList()) {
                md.append("| ").append(split.label()).append(" |");
                for (int batch : ratioBatches) {
                    md.append(' ').append(ratios.stream().filter(r -> r.split().equals(split) && r.batch() == batch)
                            .findFirst().map(r -> String.format(Locale.ROOT, "%.3f", r.ratio())).orElse("")).append(" |");
                }
                md.append('\n');
            }
            md.append('\n');
        }
        md.append("Runtimes:\n\n");
        for (RawLimits.Runtime runtime : raw.runtimes()) {
            md.append("- `").append(runtime.name()).append("`: ").append(runtime.description());
            if (!runtime.measured()) {
                md.append(": **not measured**:\n\n```\n").append(runtime.failure()).append("\n```\n");
            }
            md.append('\n');
        }
        return md.append('\n').toString();
    }

    static String goalsTable(List<Goals.Goal> goals) {
        StringBuilder md = new StringBuilder();
        md.append("| workload | figure | Serval | limit | limit value | Serval vs limit | goal | met |\n");
        md.append("|---|---|---:|---|---:|---:|---|---|\n");
        for (Goals.Goal goal : goals) {
            String value = Double.isNaN(goal.value()) ? "n/a" : switch (goal.relation()) {
                case "ratio" -> String.format(Locale.ROOT, "%.3f x", goal.value());
                case "overhead ms" -> String.format(Locale.ROOT, "%+.3f ms", goal.value());
                default -> String.format(Locale.ROOT, "%.0f", goal.value());
            };
            md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s |%n", goal.workload(),
                    goal.figure(), number(goal.serval()), goal.limitName(), goal.limitName().isEmpty() ? ""
                            : number(goal.limit()), value, goal.goal(),
                    goal.met() == null ? "" : goal.met() ? "yes" : "**no**"));
        }
        return md.toString();
    }

    private static String number(double value) {
        if (Double.isNaN(value)) {
            return "n/a";
        }
        return value >= 100 ? String.format(Locale.ROOT, "%.0f", value) : String.format(Locale.ROOT, "%.3f", value);
    }

    private static String ms(double value) {
        return Double.isNaN(value) ? "" : String.format(Locale.ROOT, "%.3f", value);
    }

    /** One PNG per workload with open-loop runs; returns the file names. */
    private static List<String> plot(Path out, List<RunResult> runs) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Set<String> workloads = new LinkedHashSet<>();
        runs.stream().filter(r -> r.mode().equals("open")).forEach(r -> workloads.add(r.workload()));
        List<String> files = new ArrayList<>();
        for (String workload : workloads) {
            XYChart chart = new XYChartBuilder().width(960).height(600)
                    .title("Latency vs offered load: " + workload + " (open loop, from intended send time)")
                    .xAxisTitle("offered load (requests/s)").yAxisTitle("latency (ms, log scale)").build();
            chart.getStyler().setYAxisLogarithmic(true);
            chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
            chart.getStyler().setMarkerSize(7);
            chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
            chart.getStyler().setXAxisMin(0.0);
            double low = Double.MAX_VALUE;
            double high = 0;
            for (String target : List.of(LoadBenchmark.SERVAL, LoadBenchmark.BARE)) {
                List<RunResult> open = runs.stream().filter(r -> r.target().equals(target)
                        && r.workload().equals(workload) && r.mode().equals("open")).toList();
                if (open.isEmpty()) {
                    continue;
                }
                String[] names = {"p50", "p90", "p99", "p99.9"};
                for (int p = 0; p < names.length; p++) {
                    List<Double> x = new ArrayList<>();
                    List<Double> y = new ArrayList<>();
                    for (RunResult run : open) {
                        double value = switch (p) {
                            case 0 -> run.p50();
                            case 1 -> run.p90();
                            case 2 -> run.p99();
                            default -> run.p999();
                        };
                        if (!Double.isNaN(value) && value > 0) {
                            x.add(run.offeredRate());
                            y.add(value);
                            low = Math.min(low, value);
                            high = Math.max(high, value);
                        }
                    }
                    if (x.isEmpty() || (target.equals(LoadBenchmark.BARE) && p % 2 == 1)) {
                        continue; // the bare server's p50 and p99 are enough to read the overhead from
                    }
                    XYSeries series = chart.addSeries(target + " " + names[p], x, y);
                    series.setLineColor(COLORS[p]);
                    series.setMarkerColor(COLORS[p]);
                    if (target.equals(LoadBenchmark.BARE)) {
                        series.setLineStyle(SeriesLines.DASH_DASH);
                        series.setMarker(SeriesMarkers.NONE);
                    }
                }
            }
            double saturation = Goals.saturation(runs, LoadBenchmark.SERVAL, workload);
            if (!Double.isNaN(saturation) && high > 0) {
                XYSeries line = chart.addSeries("Serval saturation (closed loop)", new double[] {saturation, saturation},
                        new double[] {low, high});
                line.setLineStyle(SeriesLines.DOT_DOT);
                line.setLineColor(java.awt.Color.GRAY);
                line.setMarker(SeriesMarkers.NONE);
            }
            String file = "latency-" + workload + ".png";
            BitmapEncoder.saveBitmap(chart, out.resolve(file).toString(), BitmapEncoder.BitmapFormat.PNG);
            files.add(file);
        }
        return files;
    }
}
