package dev.serval.bench.load;

import dev.serval.api.grpc.v2.ModelInferRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Serval against Serval: the same workload on two or more Servals started with different settings, measured in
 * alternation in one run, so that a change is judged by a ratio from one stretch of time on this noisy machine and
 * never by two numbers from different runs. Every variant's server is started first and pre-warmed; then, round after
 * round, each variant in turn runs a closed loop at each connection count. The report gives each variant's rate,
 * p50 and server CPU per request, and its rate over the first variant's in the same round. Workload {@code grpc-noop}
 * is {@code noop} over the OIP gRPC {@code ModelInfer} (raw contents, grpc-java, one HTTP/2 channel per variant, the
 * connection count read as calls in flight on it); {@code grpc-minilm-short} is {@code minilm-short}'s texts, one per
 * {@code ModelInfer}, the same way; {@code minilm-fp32-short} is the same texts over OIP REST to the fp32 MiniLM,
 * batched as shipped ({@link LoadBenchmark#fp32Arguments}: its repository under the output folder).
 *
 * <p>A variant is {@code name=settings}: JVM arguments for that Serval, separated by spaces (an empty settings list
 * is Serval as shipped), and optionally {@code jar=PATH}, another build's {@code quarkus-run.jar} (a copy of an older
 * {@code platform-api/target/quarkus-app}), to judge a change of code against the code before it. Output:
 * {@code platform-bench/target/variants/summary.md} (or {@code --out DIR}). From the repository root:
 * <pre>{@code
 * bin/loadbench --variants --variant 'shipped=' --variant 'one-loop=-Dquarkus.vertx.event-loops-pool-size=1' \
 *     [--workload minilm-short|minilm-fp32-short|noop|grpc-noop|grpc-minilm-short] [--connections 1,128] [--rounds 3] [--measure 10s] \
 *     [--pre-warm 40s]
 * }</pre>
 */
public final class VariantBenchmark {

    /** {@code minilm-short}'s texts over gRPC {@code ModelInfer}, one text per call. */
    static final String GRPC_MINILM_SHORT = "grpc-minilm-short";

    private static final String USAGE = "usage: bin/loadbench --variants --variant NAME=[-Dkey=value ...] [jar=PATH] "
            + "--variant NAME=... [--workload minilm-short|minilm-fp32-short|noop|grpc-noop|grpc-minilm-short] "
            + "[--connections 1,128 | --rates 30000] [--rounds 3] [--measure 10s] [--pre-warm 40s] [--out DIR] [--serval-opt -Dkey=value]...";
    private static final Duration DRAIN = Duration.ofSeconds(3);
    /** An open loop's connections at most, as the load benchmark's open loops on noop. */
    private static final int OPEN_MAX_CONNECTIONS = 64;

    private VariantBenchmark() {
    }

    /** One variant: its name, the JVM arguments of its Serval, and the jar it runs. */
    record Variant(String name, List<String> arguments, Path jar) {

        private static final String JAR = "jar=";

        static Variant parse(String text) {
            int equals = text.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException("--variant needs NAME=settings, got '" + text + "'");
            }
            String settings = text.substring(equals + 1).trim();
            List<String> arguments = new ArrayList<>();
            Path jar = ServalProcess.JAR;
            for (String setting : settings.isEmpty() ? new String[0] : settings.split("\\s+")) {
                if (setting.startsWith(JAR)) {
                    jar = Path.of(setting.substring(JAR.length()));
                } else {
                    arguments.add(setting);
                }
            }
            return new Variant(text.substring(0, equals), List.copyOf(arguments), jar);
        }
    }

    public static void main(String[] args) throws Exception {
        Options.check(args, USAGE, Set.of(), Set.of("--variant", "--workload", "--connections", "--rates", "--rounds",
                "--measure", "--pre-warm", "--out", "--serval-opt"));
        List<String> arguments = Arrays.asList(args);
        List<Variant> variants = Options.values(args, "--variant").stream().map(Variant::parse).toList();
        if (variants.size() < 2) {
            System.err.println("give at least two --variant");
            System.err.println(USAGE);
            System.exit(2);
        }
        String workloadName = Options.value(arguments, "--workload", LoadBenchmark.MINILM_SHORT);
        Workload workload = switch (workloadName) {
            case "noop", "grpc-noop" -> Workload.noop("echo");
            case LoadBenchmark.MINILM_SHORT, GRPC_MINILM_SHORT -> Workload.texts(LoadBenchmark.MINILM_SHORT,
                    LoadBenchmark.MINILM_DEPLOYMENT, ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
            case LoadBenchmark.MINILM_FP32_SHORT -> Workload.texts(LoadBenchmark.MINILM_FP32_SHORT,
                    LoadBenchmark.FP32_DEPLOYMENT, ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED));
            default -> throw new IllegalArgumentException("--workload is noop, grpc-noop, minilm-short, "
                    + LoadBenchmark.MINILM_FP32_SHORT + " or " + GRPC_MINILM_SHORT + ", not " + workloadName);
        };
        List<Integer> connections = Options.ints(arguments, "--connections", List.of(1, 128));
        // Open loops instead of closed ones: requests at these rates (per second), whatever the server does.
        List<Integer> rates = Options.ints(arguments, "--rates", List.of());
        int rounds = Integer.parseInt(Options.value(arguments, "--rounds", "3"));
        Duration measure = Options.duration(arguments, "--measure", Duration.ofSeconds(10));
        Duration preWarm = Options.duration(arguments, "--pre-warm", Duration.ofSeconds(40));
        Path out = Path.of(Options.value(arguments, "--out", "platform-bench/target/variants"));
        Files.createDirectories(out);

        List<String> common = new ArrayList<>(List.of("-Dserval.api.auth-enabled=false",
                "-Dserval.deployments." + LoadBenchmark.MINILM_DEPLOYMENT + ".max-queued-requests=1024"));
        boolean grpc = workloadName.startsWith("grpc-");
        if (grpc && !rates.isEmpty()) {
            throw new IllegalArgumentException("--rates (open loops) is for the REST workloads, not " + workloadName);
        }
        boolean open = !rates.isEmpty();
        List<ModelInferRequest> calls = workloadName.equals(GRPC_MINILM_SHORT)
                ? ChatTexts.shortTexts(ChatTexts.COUNT, ChatTexts.SEED).stream().map(GrpcBenchmark::text).toList()
                : List.of(GrpcBenchmark.noop());
        if (workload.name().equals(LoadBenchmark.MINILM_FP32_SHORT)) {
            common.addAll(LoadBenchmark.fp32Arguments(out));
        }
        if (workload.name().equals("noop")) {
            common.add("-Dserval.deployments.echo.model=noop");
            common.add("-Dserval.deployments.echo.max-queued-requests=1024");
        }
        common.addAll(Options.servalOptions(args));

        StringBuilder md = new StringBuilder("# Serval against Serval\n\n");
        md.append(String.format(Locale.ROOT, "Run %s, load average before %s; workload %s; %s, %d s each after 1 s "
                + "unrecorded, %d rounds, variants in alternation, each against its own Serval (all started and "
                + "pre-warmed %d s first). Settings common to all: `%s`.%n%n",
                Instant.now(), MachineUsage.loadAverage(), workloadName, open ? "open loops at " + rates
                        + " requests/s (at most " + OPEN_MAX_CONNECTIONS + " connections)" : "closed loops at "
                        + connections + " connections", measure.toSeconds(), rounds, preWarm.toSeconds(),
                String.join(" ", common)));
        for (Variant variant : variants) {
            md.append("- `").append(variant.name()).append("`: `").append(String.join(" ", variant.arguments()))
                    .append('`');
            if (!variant.jar().equals(ServalProcess.JAR)) {
                md.append(", running `").append(variant.jar()).append('`');
            }
            md.append('\n');
        }
        // In open loops every variant gets the same rate: the ratio is of p99 instead.
        md.append("\n| round | ").append(open ? "offered req/s" : "connections").append(" | variant | req/s | ")
                .append(open ? "p99 / " : "/ ").append(variants.getFirst().name())
                .append(" | p50 ms | p99 ms | server µs/req | errors |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");

        Map<String, ServalProcess> servers = new LinkedHashMap<>();
        Map<String, ManagedChannel> channels = new LinkedHashMap<>();
        try (LoadGenerator generator = new LoadGenerator()) {
            for (Variant variant : variants) {
                List<String> settings = new ArrayList<>(common);
                settings.addAll(variant.arguments());
                ServalProcess server = ServalProcess.start(settings, variant.jar(),
                        out.resolve(variant.name() + ".log"));
                servers.put(variant.name(), server);
                if (grpc) {
                    channels.put(variant.name(), ManagedChannelBuilder.forAddress("127.0.0.1", server.port())
                            .usePlaintext().directExecutor().build());
                }
            }
            for (Variant variant : variants) {
                ServalProcess server = servers.get(variant.name());
                GrpcBenchmark.Figures warm = grpc
                        ? GrpcBenchmark.closedLoop(GrpcBenchmark.grpcJava(List.of(channels.get(variant.name()))),
                                calls, connections.getLast(), preWarm, Duration.ZERO, server.pid())
                        : GrpcBenchmark.Figures.of(generator.closedLoop(LoadBenchmark.SERVAL, server.port(),
                                server.pid(), workload, connections.getLast(), Duration.ZERO, preWarm, DRAIN));
                System.out.printf("pre-warm %-16s %8.0f req/s%n", variant.name(), warm.throughput());
            }
            Map<String, List<Double>> ratios = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (int count : open ? rates : connections) {
                    double first = Double.NaN;
                    for (Variant variant : variants) {
                        ServalProcess server = servers.get(variant.name());
                        GrpcBenchmark.Figures run = grpc
                                ? GrpcBenchmark.closedLoop(GrpcBenchmark.grpcJava(List.of(channels.get(
                                        variant.name()))), calls, count, Duration.ofSeconds(1), measure, server.pid())
                                : GrpcBenchmark.Figures.of(open
                                        ? generator.openLoop(LoadBenchmark.SERVAL, server.port(), server.pid(),
                                                workload, count, OPEN_MAX_CONNECTIONS, Duration.ofSeconds(1), measure,
                                                DRAIN)
                                        : generator.closedLoop(LoadBenchmark.SERVAL, server.port(), server.pid(),
                                                workload, count, Duration.ofSeconds(1), measure, DRAIN));
                        double figure = open ? run.p99() : run.throughput();
                        if (Double.isNaN(first)) {
                            first = figure;
                        }
                        double ratio = figure / first;
                        ratios.computeIfAbsent(variant.name() + " @" + count, k -> new ArrayList<>()).add(ratio);
                        double micros = MachineUsage.microsPerRequest(run.cpu().server(), run.throughput());
                        String row = String.format(Locale.ROOT, "| %d | %d | %s | %.0f | %.3f | %.3f | %.3f | %.1f | %d |%n",
                                round, count, variant.name(), run.throughput(), ratio, run.p50(), run.p99(), micros,
                                run.errors());
                        md.append(row);
                        System.out.print(row);
                    }
                }
            }
            md.append(open ? "\np99 over `" : "\nRatios to `").append(variants.getFirst().name())
                    .append(open ? "`'s per round:\n\n" : "` per round:\n\n");
            ratios.forEach((key, values) -> md.append("- ").append(key).append(": ").append(values.stream()
                    .map(v -> String.format(Locale.ROOT, "%.3f", v)).toList()).append('\n'));
        } finally {
            for (ManagedChannel channel : channels.values()) {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            for (ServalProcess server : servers.values()) {
                server.close();
            }
        }
        Files.writeString(out.resolve("summary.md"), md.toString());
        System.out.println();
        System.out.println(md);
        System.out.println("Wrote " + out.resolve("summary.md"));
    }
}
