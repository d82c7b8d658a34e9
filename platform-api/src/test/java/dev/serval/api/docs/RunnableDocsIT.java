package dev.serval.api.docs;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documentation's examples run as documented (docs/testing.md, "Docs whose examples run"): every shell block of
 * README.md and docs/*.md marked {@code <!-- runnable -->} ({@link DocBlocksTest} checks that every block is marked),
 * run by bash against one packaged Serval started with its defaults, answers what its {@code # ->} lines say.
 * Blocks run in page order, README.md first, then docs/*.md by name, all against the same server: a block may use what
 * an earlier block made (getting-started.md's deploy step uses the model folder its previous block wrote).
 */
class RunnableDocsIT {

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

    @TestFactory
    Stream<DynamicTest> everyRunnableBlockAnswersAsDocumented() throws IOException {
        Path scratch = Files.createDirectories(home.resolve("work"));
        return DocBlock.ofDocs(DocBlocksTest.ROOT).stream().filter(block -> block.marker() == DocBlock.Marker.RUNNABLE)
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
}
