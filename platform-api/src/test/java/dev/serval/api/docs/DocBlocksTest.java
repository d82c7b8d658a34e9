package dev.serval.api.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The documentation's shell blocks, read without a server (so that {@code bin/test -DskipITs} checks them too): each
 * says whether it runs, and each runnable one parses ({@link DocCommand#split}). {@link RunnableDocsIT} runs them.
 */
class DocBlocksTest {

    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void everyShellBlockSaysWhetherItRuns() {
        List<String> unmarked = new ArrayList<>();
        for (DocBlock block : DocBlock.ofDocs(ROOT)) {
            if (block.marker() == DocBlock.Marker.NONE) {
                unmarked.add(block.where());
            }
        }
        assertEquals(List.of(), unmarked, "shell blocks without '<!-- runnable -->' or '<!-- not-runnable: why -->' on "
                + "the line before their fence (docs/testing.md)");
    }

    @Test
    void everyRunnableBlockParsesIntoCommandsAndExpectations() {
        List<String> refused = new ArrayList<>();
        for (DocBlock block : DocBlock.ofDocs(ROOT)) {
            if (block.marker() == DocBlock.Marker.RUNNABLE) {
                try {
                    DocCommand.split(block.lines(), block.line() + 1);
                } catch (IllegalArgumentException e) {
                    refused.add(block.where() + ": " + e.getMessage());
                }
            }
        }
        assertEquals(List.of(), refused);
    }

    @Test
    void theReadmeTheApiPageAndTheGettingStartedPageHaveRunnableBlocks() {
        for (String page : List.of("README.md", "api.md", "getting-started.md")) {
            assertTrue(DocBlock.ofDocs(ROOT).stream().anyMatch(block -> block.file().getFileName().toString()
                    .equals(page) && block.marker() == DocBlock.Marker.RUNNABLE), page + " has no runnable block");
        }
    }
}
