package dev.serval.api.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A shell block of a Markdown page (a fence whose info string starts with {@code bash}, {@code sh}, {@code shell},
 * {@code console} or {@code zsh}) with what the line before its fence says about it (docs/testing.md): {@code <!--
 * runnable -->}, {@code <!-- not-runnable: why -->}, or nothing, which the docs test refuses so that every new block
 * decides. HTML comments render as nothing on GitHub.
 *
 * @param file the page, as given to {@link #read}
 * @param line the 1-based line of the opening fence
 * @param marker what the page says about the block
 * @param reason why it cannot run, for {@link Marker#NOT_RUNNABLE}; empty otherwise
 * @param lines the block's lines, without its fences and without the indentation of its opening fence
 */
record DocBlock(Path file, int line, Marker marker, String reason, List<String> lines) {

    private static final Set<String> SHELLS = Set.of("bash", "sh", "shell", "console", "zsh");
    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```+|~~~+)\\s*([^\\s`]*).*$");
    private static final Pattern RUNNABLE = Pattern.compile("^\\s*<!--\\s*runnable\\s*-->\\s*$");
    private static final Pattern NOT_RUNNABLE = Pattern.compile("^\\s*<!--\\s*not-runnable:\\s*(\\S.*?)\\s*-->\\s*$");

    /** What a page says about a shell block. */
    enum Marker {
        /** {@code <!-- runnable -->}: the docs test runs it and checks its {@code # ->} lines. */
        RUNNABLE,
        /** {@code <!-- not-runnable: why -->}: it needs what the test machine lacks (network, Docker, Kubernetes...). */
        NOT_RUNNABLE,
        /** Neither: refused by the docs test. */
        NONE
    }

    DocBlock {
        Objects.requireNonNull(file);
        Objects.requireNonNull(marker);
        Objects.requireNonNull(reason);
        lines = List.copyOf(lines);
        if (line < 1) {
            throw new IllegalArgumentException("line " + line);
        }
        if ((marker == Marker.NOT_RUNNABLE) == reason.isBlank()) {
            throw new IllegalArgumentException("a reason is given exactly for a not-runnable block: " + marker + ", '"
                    + reason + "'");
        }
    }

    /** Where the block is, as {@code README.md:51}. */
    String where() {
        return file.getFileName() + ":" + line;
    }

    /**
     * The shell blocks of the project's documentation, in the order the docs test runs them: README.md, then
     * docs/*.md by name.
     *
     * @param root the repository's root folder
     */
    static List<DocBlock> ofDocs(Path root) {
        List<DocBlock> blocks = new ArrayList<>(read(root.resolve("README.md")));
        try (Stream<Path> pages = Files.list(root.resolve("docs"))) {
            pages.filter(page -> page.getFileName().toString().endsWith(".md")).sorted()
                    .forEach(page -> blocks.addAll(read(page)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(blocks);
    }

    /** The shell blocks of {@code file}, in order. */
    static List<DocBlock> read(Path file) {
        try {
            return parse(file, Files.readAllLines(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The shell blocks of a page's lines, in order; an unclosed fence is refused. */
    static List<DocBlock> parse(Path file, List<String> page) {
        List<DocBlock> blocks = new ArrayList<>();
        for (int i = 0; i < page.size(); i++) {
            Matcher open = FENCE.matcher(page.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String fence = open.group(2);
            int close = i + 1;
            while (close < page.size() && !page.get(close).strip().equals(fence)) {
                close++;
            }
            if (close == page.size()) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": the fence is never closed");
            }
            String language = open.group(3);
            if (SHELLS.contains(language)) {
                List<String> lines = new ArrayList<>();
                for (String line : page.subList(i + 1, close)) {
                    lines.add(line.startsWith(indent) ? line.substring(indent.length()) : line.stripLeading());
                }
                String before = i == 0 ? "" : page.get(i - 1);
                Matcher notRunnable = NOT_RUNNABLE.matcher(before);
                if (RUNNABLE.matcher(before).matches()) {
                    blocks.add(new DocBlock(file, i + 1, Marker.RUNNABLE, "", lines));
                } else if (notRunnable.matches()) {
                    blocks.add(new DocBlock(file, i + 1, Marker.NOT_RUNNABLE, notRunnable.group(1), lines));
                } else {
                    blocks.add(new DocBlock(file, i + 1, Marker.NONE, "", lines));
                }
            }
            i = close;
        }
        return List.copyOf(blocks);
    }
}
