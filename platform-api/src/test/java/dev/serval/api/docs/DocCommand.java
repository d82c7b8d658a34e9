package dev.serval.api.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One command of a runnable block (its continuation lines and here-document included) and what the block documents
 * of its answer: the {@code # ->} line after it, or at the end of its line (docs/testing.md).
 *
 * @param line the 1-based line of the page where the command starts
 * @param text the command as written, lines joined with newlines
 * @param expected what it must answer
 */
record DocCommand(int line, String text, Expectation expected) {

    /** {@code # ->} at the end of a command's line, after a space. */
    private static final Pattern INLINE = Pattern.compile("\\s#\\s*->(.*)$");
    /** A line that is only an expectation. */
    private static final Pattern EXPECTATION = Pattern.compile("^\\s*#\\s*->(.*)$");
    /** A here-document's operator and delimiter ({@code <<'PY'}, {@code <<-EOF}). */
    private static final Pattern HEREDOC = Pattern.compile("<<-?\\s*(['\"]?)(\\w+)\\1");
    private static final Pattern STATUS = Pattern.compile("^\\s*(\\d{3})(?=\\s|$)");

    DocCommand {
        Objects.requireNonNull(text);
        Objects.requireNonNull(expected);
        if (text.isBlank()) {
            throw new IllegalArgumentException("an empty command");
        }
    }

    /**
     * What a command must answer: the status of the last HTTP answer it received, when given (any 2xx otherwise), and
     * its output as JSON matching {@code body}, when given. A command must also exit 0.
     *
     * @param status the HTTP status documented, or empty for any 2xx
     * @param body the JSON documented, or empty when the example shows none
     */
    record Expectation(OptionalInt status, Optional<JsonPattern> body) {
        static final Expectation SUCCESS = new Expectation(OptionalInt.empty(), Optional.empty());

        Expectation {
            Objects.requireNonNull(status);
            Objects.requireNonNull(body);
            if (status.isPresent() && (status.getAsInt() < 100 || status.getAsInt() > 599)) {
                throw new IllegalArgumentException("not an HTTP status: " + status.getAsInt());
            }
        }

        /** Whether {@code actual} is what this expects (any 2xx when no status is documented). */
        boolean acceptsStatus(int actual) {
            return status.isPresent() ? actual == status.getAsInt() : actual >= 200 && actual < 300;
        }
    }

    /**
     * The commands of a block, in order. Comment lines other than expectations are left out; an expectation's JSON
     * continues on the next comment lines ({@code #     "outputs": ...}) until its brackets close.
     *
     * @param firstLine the page's line of the block's first line
     */
    static List<DocCommand> split(List<String> lines, int firstLine) {
        List<DocCommand> commands = new ArrayList<>();
        int i = 0;
        while (i < lines.size()) {
            String line = lines.get(i);
            int lineNumber = firstLine + i;
            Matcher expectation = EXPECTATION.matcher(line);
            if (expectation.matches()) {
                if (commands.isEmpty()) {
                    throw new IllegalArgumentException("line " + lineNumber + ": an expectation before any command");
                }
                DocCommand last = commands.removeLast();
                if (last.expected != Expectation.SUCCESS) {
                    throw new IllegalArgumentException("line " + lineNumber + ": a second expectation for the command "
                            + "of line " + last.line);
                }
                StringBuilder text = new StringBuilder(expectation.group(1));
                i = continueJson(lines, i + 1, text);
                commands.add(new DocCommand(last.line, last.text, parse(text.toString(), lineNumber)));
                continue;
            }
            if (line.isBlank() || line.strip().startsWith("#")) {
                i++;
                continue;
            }
            List<String> command = new ArrayList<>();
            command.add(line);
            i++;
            while (command.getLast().endsWith("\\") && i < lines.size()) {
                command.add(lines.get(i++));
            }
            Expectation expected = Expectation.SUCCESS;
            Matcher inline = INLINE.matcher(command.getLast());
            if (inline.find()) {
                StringBuilder text = new StringBuilder(inline.group(1));
                int next = continueJson(lines, i, text);
                if (next != i) {
                    throw new IllegalArgumentException("line " + lineNumber + ": an expectation at the end of a "
                            + "command must fit on its line");
                }
                expected = parse(text.toString(), lineNumber + command.size() - 1);
            }
            Matcher heredoc = HEREDOC.matcher(String.join("\n", command));
            if (heredoc.find()) {
                String delimiter = heredoc.group(2);
                while (i < lines.size() && !lines.get(i).strip().equals(delimiter)) {
                    command.add(lines.get(i++));
                }
                if (i == lines.size()) {
                    throw new IllegalArgumentException("line " + lineNumber + ": the here-document " + delimiter
                            + " is never closed");
                }
                command.add(lines.get(i++));
            }
            commands.add(new DocCommand(lineNumber, String.join("\n", command), expected));
        }
        return List.copyOf(commands);
    }

    /** Appends comment lines to an expectation's unclosed JSON; answers the index of the first line not taken. */
    private static int continueJson(List<String> lines, int from, StringBuilder text) {
        String json = text.toString().strip();
        Matcher status = STATUS.matcher(json);
        if (status.find()) {
            json = json.substring(status.end()).strip();
        }
        if (!json.startsWith("{") && !json.startsWith("[")) {
            return from;
        }
        StringBuilder pending = new StringBuilder(json);
        int i = from;
        while (JsonPattern.extent(pending.toString()) < 0 && i < lines.size()) {
            String line = lines.get(i).strip();
            if (!line.startsWith("#") || EXPECTATION.matcher(line).matches()) {
                break;
            }
            String more = line.substring(1).strip();
            text.append(' ').append(more);
            pending.append(' ').append(more);
            i++;
        }
        return i;
    }

    /**
     * Parses what follows {@code ->}: a status, JSON, or a status then JSON; prose may follow either (and may not
     * start with a bracket).
     */
    static Expectation parse(String text, int lineNumber) {
        String rest = text.strip();
        OptionalInt status = OptionalInt.empty();
        Matcher code = STATUS.matcher(rest);
        if (code.find()) {
            status = OptionalInt.of(Integer.parseInt(code.group(1)));
            rest = rest.substring(code.end()).strip();
        }
        Optional<JsonPattern> body = Optional.empty();
        if (rest.startsWith("{") || rest.startsWith("[")) {
            int extent = JsonPattern.extent(rest);
            if (extent < 0) {
                throw new IllegalArgumentException("line " + lineNumber + ": the JSON is not closed: " + rest);
            }
            try {
                body = Optional.of(JsonPattern.parse(rest.substring(0, extent)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + lineNumber + ": " + e.getMessage(), e);
            }
        }
        if (status.isEmpty() && body.isEmpty()) {
            throw new IllegalArgumentException("line " + lineNumber + ": '# ->' must be followed by a status, JSON or "
                    + "both: " + text.strip());
        }
        return new Expectation(status, body);
    }
}
