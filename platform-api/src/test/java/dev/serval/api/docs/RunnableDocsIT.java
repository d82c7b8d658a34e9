package dev.serval.api.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documentation's examples run as documented (docs/testing.md, "Docs whose examples run"): every shell block of
 * README.md and docs/*.md is marked {@code <!-- runnable -->} or {@code <!-- not-runnable: why -->}, and every runnable
 * one, run by bash against one packaged Serval started with its defaults, answers what its {@code # ->} lines say.
 * Blocks run in page order, README.md first, then docs/*.md by name, so a block may use a deployment an earlier one
 * made (docs/api.md's rerank example uses README.md's {@code reranker}).
 */
class RunnableDocsIT {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Duration START = Duration.ofSeconds(120);

    @TempDir
    static Path home;
    private static PackagedServal serval;

    @BeforeAll
    static void startServal() throws Exception {
        serval = PackagedServal.startReady(home, START);
    }

    @AfterAll
    static void stopServal() {
        if (serval != null) {
            serval.close();
        }
    }

    @Test
    void everyShellBlockSaysWhetherItRuns() {
        List<String> unmarked = new ArrayList<>();
        for (DocBlock block : blocks()) {
            if (block.marker() == DocBlock.Marker.NONE) {
                unmarked.add(block.where());
            }
        }
        assertEquals(List.of(), unmarked, "shell blocks without '<!-- runnable -->' or '<!-- not-runnable: why -->' on "
                + "the line before their fence (docs/testing.md)");
    }

    @Test
    void theReadmeAndTheGettingStartedPageHaveRunnableBlocks() {
        for (String page : List.of("README.md", "getting-started.md", "api.md")) {
            assertFalse(blocks().stream().noneMatch(block -> block.file().getFileName().toString().equals(page)
                    && block.marker() == DocBlock.Marker.RUNNABLE), page + " has no runnable block");
        }
    }

    @TestFactory
    Stream<DynamicTest> everyRunnableBlockAnswersAsDocumented() throws IOException {
        Path scratch = Files.createDirectories(home.resolve("work"));
        return blocks().stream().filter(block -> block.marker() == DocBlock.Marker.RUNNABLE)
                .map(block -> DynamicTest.dynamicTest(block.where(), () -> {
                    List<DocCommand> commands = DocCommand.split(block.lines(), block.line() + 1);
                    for (BlockRun.Result result : BlockRun.run(commands, serval, scratch)) {
                        Optional<String> mismatch = result.mismatch();
                        if (mismatch.isPresent()) {
                            fail(result.describe(mismatch.get(), block.file().getFileName() + ":"
                                    + result.command().line()) + "\nServal's log ends:\n" + serval.logTail());
                        }
                    }
                }));
    }

    /** The shell blocks of README.md, then of docs/*.md by name. */
    private static List<DocBlock> blocks() {
        List<DocBlock> blocks = new ArrayList<>(DocBlock.read(ROOT.resolve("README.md")));
        try (Stream<Path> pages = Files.list(ROOT.resolve("docs"))) {
            pages.filter(page -> page.getFileName().toString().endsWith(".md")).sorted()
                    .forEach(page -> blocks.addAll(DocBlock.read(page)));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return blocks;
    }
}
