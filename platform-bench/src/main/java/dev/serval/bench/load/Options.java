package dev.serval.bench.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What the overload and soak benchmarks share around a run: their command-line options ({@code --name value}), and
 * the facts every report opens with (the commit measured, the machine, the JVM). Stateless.
 */
final class Options {

    private Options() {
    }

    /**
     * Checks a benchmark's command line before anything runs: {@code --help} prints {@code usage} and exits 0; an
     * unknown option, or a valued one without its value, prints the problem and {@code usage} and exits 2 (a typo
     * must not start a 20-minute run with the defaults).
     *
     * @param flags  options that stand alone ({@code --quick})
     * @param valued options followed by a value ({@code --out DIR})
     */
    static void check(String[] args, String usage, Set<String> flags, Set<String> valued) {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println(usage);
            System.exit(0);
        }
        String problem = problem(args, flags, valued);
        if (problem != null) {
            System.err.println(problem);
            System.err.println(usage);
            System.exit(2);
        }
    }

    /** What is wrong with {@code args} ({@link #check}), or null. */
    static String problem(String[] args, Set<String> flags, Set<String> valued) {
        for (int i = 0; i < args.length; i++) {
            if (flags.contains(args[i])) {
                continue;
            }
            if (!valued.contains(args[i])) {
                return "unknown option '" + args[i] + "'";
            }
            if (i + 1 >= args.length) {
                return "option " + args[i] + " needs a value";
            }
            i++;
        }
        return null;
    }

    /** The value after {@code name}, or {@code otherwise}. */
    static String value(List<String> arguments, String name, String otherwise) {
        int at = arguments.indexOf(name);
        return at >= 0 && at + 1 < arguments.size() ? arguments.get(at + 1) : otherwise;
    }

    /** A duration option: {@code 90s}, {@code 10m}, {@code 1h}, {@code 500ms}, ISO-8601, or a number of seconds. */
    static Duration duration(List<String> arguments, String name, Duration otherwise) {
        String value = value(arguments, name, null);
        return value == null ? otherwise : parseDuration(value);
    }

    static Duration parseDuration(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        try {
            if (text.startsWith("p")) {
                return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            }
            if (text.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
            }
            long amount = Long.parseLong(text.replaceAll("[smh]$", ""));
            return switch (text.charAt(text.length() - 1)) {
                case 'm' -> Duration.ofMinutes(amount);
                case 'h' -> Duration.ofHours(amount);
                default -> Duration.ofSeconds(amount);
            };
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a duration: '" + value + "' (write 20s, 10m, 500ms or PT20S)", e);
        }
    }

    /** {@code 20 s}, {@code 10 min}, {@code 500 ms}: a duration as a report prints it. */
    static String human(Duration duration) {
        if (duration.toMillis() % 1000 != 0) {
            return duration.toMillis() + " ms";
        }
        return duration.toSeconds() % 60 == 0 && duration.toSeconds() > 0 ? duration.toMinutes() + " min"
                : duration.toSeconds() + " s";
    }

    /** A comma-separated list of numbers. */
    static List<Double> doubles(List<String> arguments, String name, List<Double> otherwise) {
        String value = value(arguments, name, null);
        return value == null ? otherwise : Arrays.stream(value.split(",")).map(String::trim).map(Double::valueOf)
                .toList();
    }

    /** A comma-separated list of whole numbers (connection counts, request rates). */
    static List<Integer> ints(List<String> arguments, String name, List<Integer> otherwise) {
        String value = value(arguments, name, null);
        return value == null ? otherwise : Arrays.stream(value.split(",")).map(String::trim).map(Integer::valueOf)
                .toList();
    }

    /** Every value after a {@code --serval-opt}: extra JVM arguments for Serval. */
    static List<String> servalOptions(String[] args) {
        return values(args, "--serval-opt");
    }

    /** Every value after {@code name}, for an option that may be repeated. */
    static List<String> values(String[] args, String name) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                values.add(args[i + 1]);
            }
        }
        return values;
    }

    /** {@code git describe}-like facts of the working directory: the commit and whether files differ from it. */
    static Map<String, Object> commit() {
        Map<String, Object> commit = new LinkedHashMap<>();
        commit.put("sha", git("rev-parse", "HEAD"));
        commit.put("subject", git("log", "-1", "--format=%s"));
        String status = git("status", "--porcelain", "--untracked-files=no");
        commit.put("uncommittedChanges", status.isEmpty() ? List.of() : List.of(status.split("\n")));
        return commit;
    }

    private static String git(String... arguments) {
        List<String> command = new ArrayList<>(List.of("git"));
        command.addAll(List.of(arguments));
        try {
            Process git = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return git.waitFor(10, TimeUnit.SECONDS) && git.exitValue() == 0 ? output : "unknown";
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    static Map<String, Object> machine(String loadAverageBefore) {
        return Map.of("cpus", Runtime.getRuntime().availableProcessors(), "loadAverageBefore", loadAverageBefore,
                "loadAverageAfter", MachineUsage.loadAverage(), "os", System.getProperty("os.name") + " "
                        + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
    }

    static Map<String, Object> jvm() {
        return Map.of("version", System.getProperty("java.version"), "vendor", System.getProperty("java.vendor"),
                "vm", System.getProperty("java.vm.name"), "home", System.getProperty("java.home"));
    }
}
