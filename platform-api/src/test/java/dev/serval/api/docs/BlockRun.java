package dev.serval.api.docs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * One runnable block run by bash against a started Serval, as a reader pastes it, and what each of its commands
 * answered. The block is rewritten only where the reader's machine and the test's differ: {@code localhost:8080} and
 * {@code api-token-8080} name the test server's port. Bash runs with the server's home as {@code $HOME} (so {@code
 * ~/.cache/serval/...} is the server's), in a scratch directory, with {@code curl} wrapped to record each answer's
 * headers (its status) and to give up after 30 s. Each command's output, errors, exit status and headers go to files
 * of their own; one block runs at a time, on the test's thread.
 */
final class BlockRun {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern STATUS_LINE = Pattern.compile("(?m)^HTTP/\\S+ (\\d{3})");
    private static final Duration BLOCK_TIMEOUT = Duration.ofSeconds(90);

    /** What one command answered: its exit status, output, errors, and the status of its last HTTP answer. */
    record Result(DocCommand command, OptionalInt exit, String out, String err, OptionalInt status) {
        Result {
            Objects.requireNonNull(command);
            Objects.requireNonNull(exit);
            Objects.requireNonNull(out);
            Objects.requireNonNull(err);
            Objects.requireNonNull(status);
        }

        /** Why this is not what the page documents, or empty when it is. */
        Optional<String> mismatch() {
            DocCommand.Expectation expected = command.expected();
            if (exit.isEmpty()) {
                return Optional.of("it did not run: the block stopped before it");
            }
            if (exit.getAsInt() != 0) {
                return Optional.of("it exited with " + exit.getAsInt());
            }
            if (status.isEmpty() && expected.status().isPresent()) {
                return Optional.of("no HTTP answer, expected " + expected.status().getAsInt());
            }
            if (status.isPresent() && !expected.acceptsStatus(status.getAsInt())) {
                return Optional.of("HTTP " + status.getAsInt() + ", expected " + (expected.status().isPresent()
                        ? String.valueOf(expected.status().getAsInt()) : "2xx"));
            }
            if (expected.body().isPresent()) {
                JsonNode answer;
                try {
                    answer = JSON.readTree(out);
                } catch (JsonProcessingException e) {
                    return Optional.of("the output is not JSON: " + e.getOriginalMessage());
                }
                if (answer == null || answer.isMissingNode()) {
                    return Optional.of("no output, expected JSON");
                }
                return expected.body().get().mismatch(answer, "$");
            }
            return Optional.empty();
        }

        /** The command, what it answered and why that is wrong, for a failure message. */
        String describe(String why, String where) {
            return where + ": " + command.text() + "\n  " + why + "\n  status: "
                    + (status.isPresent() ? status.getAsInt() : "none") + "\n  output: " + cut(out)
                    + (err.isBlank() ? "" : "\n  errors: " + cut(err));
        }
    }

    private BlockRun() {
    }

    /** Runs {@code commands} (of one block, in order) in one bash, in {@code scratch}, against the server. */
    static List<Result> run(List<DocCommand> commands, PackagedServal serval, Path scratch)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(scratch, "block");
        StringBuilder script = new StringBuilder("curl() { command curl --max-time 30 -D \"$SERVAL_DOCS_HEADERS\" \"$@\"; }\n");
        for (int i = 0; i < commands.size(); i++) {
            String file = dir.resolve(String.valueOf(i)).toString();
            script.append("SERVAL_DOCS_HEADERS='").append(file).append(".headers'; : > \"$SERVAL_DOCS_HEADERS\"\n")
                    .append("{\n").append(rewrite(commands.get(i).text(), serval.port())).append("\n} > '").append(file)
                    .append(".out' 2> '").append(file).append(".err'\n")
                    .append("echo $? > '").append(file).append(".rc'\n");
        }
        Path scriptFile = Files.writeString(dir.resolve("block.sh"), script);
        ProcessBuilder builder = new ProcessBuilder("bash", "--noprofile", "--norc", scriptFile.toString())
                .directory(scratch.toFile()).redirectErrorStream(true).redirectOutput(dir.resolve("bash.log").toFile());
        builder.environment().put("HOME", serval.home().toString());
        Process bash = builder.start();
        boolean finished = bash.waitFor(BLOCK_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (!finished) {
            bash.descendants().forEach(ProcessHandle::destroyForcibly);
            bash.destroyForcibly();
            bash.waitFor(10, TimeUnit.SECONDS);
        }
        String bashLog = Files.readString(dir.resolve("bash.log"))
                + (finished ? "" : "\n(the block was stopped: it had not finished after " + BLOCK_TIMEOUT + ")");
        return IntStream.range(0, commands.size()).mapToObj(i -> {
            DocCommand command = commands.get(i);
            String file = String.valueOf(i);
            String rc = read(dir.resolve(file + ".rc"));
            Matcher statuses = STATUS_LINE.matcher(read(dir.resolve(file + ".headers")));
            OptionalInt status = OptionalInt.empty();
            while (statuses.find()) {
                status = OptionalInt.of(Integer.parseInt(statuses.group(1)));
            }
            String err = read(dir.resolve(file + ".err"));
            return new Result(command, rc.isBlank() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(rc.strip())),
                    read(dir.resolve(file + ".out")), rc.isBlank() ? err + bashLog : err, status);
        }).toList();
    }

    /** The command as it runs against the test server: the port is the server's. */
    static String rewrite(String command, int port) {
        return command.replace("localhost:8080", "localhost:" + port).replace("127.0.0.1:8080", "127.0.0.1:" + port)
                .replace("api-token-8080", "api-token-" + port);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    private static String cut(String text) {
        String stripped = text.strip();
        return stripped.length() <= 1500 ? stripped : stripped.substring(0, 1500) + "...";
    }
}
