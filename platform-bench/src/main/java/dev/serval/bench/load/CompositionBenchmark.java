package dev.serval.bench.load;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a handle call costs (issue 19): the same requests to a deployment directly over HTTP, and through a one-step
 * pipeline in front of it (HTTP to the pipeline, whose predictor thread calls the deployment through its handle: the
 * callee's router and admission, in-process). The difference is the cost of one in-process hop; the direct request is
 * what the caller would pay to reach the deployment over HTTP instead (from another service, on loopback: the
 * cheapest HTTP call there is).
 *
 * <p>One Serval process, its repository ({@code OUT/repository}) holding {@code via-echo} (pipeline: {@code echo}) and
 * {@code via-minilm} (pipeline: {@code all-minilm-l6-v2}); deployments {@code echo} (noop) and the default MiniLM,
 * each with one predictor thread per replica, the pipelines with two. For each pair (noop, MiniLM), in alternation and
 * {@code --rounds} times: a closed loop of 1 connection (latency) and of 8 (throughput), direct then through the
 * pipeline, {@code --measure} each after an unrecorded warm-up.
 *
 * <p>Output: {@code platform-bench/target/composition/summary.md} (or {@code --out DIR}). About 4 minutes; from the
 * repository root:
 * <pre>{@code
 * bin/loadbench --composition [--measure 10s] [--rounds 2] [--out DIR]
 * }</pre>
 */
public final class CompositionBenchmark {

    private static final String USAGE = "usage: bin/loadbench --composition [--measure 10s] [--rounds 2] [--out DIR] "
            + "[--serval-opt -Dkey=value]...";
    private static final Duration WARM_UP = Duration.ofSeconds(5);
    private static final Duration DRAIN = Duration.ofSeconds(3);

    private CompositionBenchmark() {
    }

    private record Pair(String label, Workload direct, Workload piped) {
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of(), Set.of("--measure", "--rounds", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(10));
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", "2"));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/composition"));
        Path repository = out.resolve("repository");
        pipeline(repository, "via-echo", "echo");
        pipeline(repository, "via-minilm", "all-minilm-l6-v2");

        List<String> settings = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.repository.path=" + repository.toAbsolutePath(),
                "-Dserval.deployments.all-minilm-l6-v2.predictor-threads=1",
                "-Dserval.deployments.echo.model=noop",
                "-Dserval.deployments.echo.predictor-threads=1",
                "-Dserval.deployments.via-echo.model=via-echo",
                "-Dserval.deployments.via-minilm.model=via-minilm"));
        settings.addAll(Options.servalOptions(args));
        List<String> texts = ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED);
        List<Pair> pairs = List.of(
                new Pair("noop", Workload.noop("echo"), Workload.noop("via-echo")),
                new Pair("MiniLM", Workload.texts("minilm", "all-minilm-l6-v2", texts),
                        Workload.texts("minilm", "via-minilm", texts)));

        Instant started = Instant.now();
        StringBuilder md = new StringBuilder("# A handle call against a direct HTTP call\n\n");
        md.append(String.format(Locale.ROOT, "Run %s, load average before %s; `bin/loadbench --composition --measure %s "
                + "--rounds %d`. Closed loops of 1 and 8 connections, %s each. *Direct*: HTTP to the deployment. "
                + "*Pipeline*: HTTP to a one-step pipeline whose step is that deployment, called in-process through "
                + "its handle. Latency in ms.%n%n", started, MachineUsage.loadAverage(), measure.toSeconds() + "s", rounds,
                Options.human(measure)));
        md.append("| workload | round | direct p50 (1 conn) | pipeline p50 (1 conn) | hop (ms) | hop / direct | "
                + "direct rate (8 conn) | pipeline rate (8 conn) | pipeline / direct |\n");
        md.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        try (LoadGenerator generator = new LoadGenerator();
                ServalProcess serval = ServalProcess.start(settings, out.resolve("serval.log"))) {
            System.out.printf("Serval ready on port %d%n", serval.port());
            for (int round = 1; round <= rounds; round++) {
                for (Pair pair : pairs) {
                    RunResult[] lone = new RunResult[2];
                    RunResult[] busy = new RunResult[2];
                    Workload[] variants = {pair.direct(), pair.piped()};
                    for (int v = 0; v < 2; v++) {
                        generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), variants[v], 8,
                                Duration.ZERO, WARM_UP, DRAIN);
                        lone[v] = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), variants[v],
                                1, Duration.ofSeconds(1), measure, DRAIN);
                        busy[v] = generator.closedLoop(LoadBenchmark.SERVAL, serval.port(), serval.pid(), variants[v],
                                8, Duration.ofSeconds(1), measure, DRAIN);
                        System.out.printf("  round %d %-7s %-8s 1 conn p50 %6.3f ms, 8 conn %8.1f req/s p50 %6.2f ms,"
                                + " errors %s%n", round, pair.label(), v == 0 ? "direct" : "pipeline", lone[v].p50(),
                                busy[v].throughput(), busy[v].p50(), busy[v].errors());
                    }
                    double hop = lone[1].p50() - lone[0].p50();
                    md.append(String.format(Locale.ROOT, "| %s | %d | %.3f | %.3f | %.3f | %.2f | %.0f | %.0f | %.2f |%n",
                            pair.label(), round, lone[0].p50(), lone[1].p50(), hop, hop / lone[0].p50(),
                            busy[0].throughput(), busy[1].throughput(), busy[1].throughput() / busy[0].throughput()));
                }
            }
        }
        md.append("\n*hop* = pipeline p50 − direct p50 at one connection: what one in-process handle call (and the "
                + "pipeline's predictor thread) adds to a request, against *direct p50*, which is what a call to the "
                + "deployment over loopback HTTP costs in full.\n");
        Files.createDirectories(out);
        Files.writeString(out.resolve("summary.md"), md.toString());
        System.out.println();
        System.out.println(md);
        System.out.println("Wrote " + out.resolve("summary.md"));
    }

    private static void pipeline(Path repository, String name, String step) throws java.io.IOException {
        Path version = Files.createDirectories(repository.resolve(name).resolve("1"));
        Files.writeString(version.resolve("model.yaml"), "kind: pipeline\nsteps:\n  - deployment: " + step + "\n");
    }
}
